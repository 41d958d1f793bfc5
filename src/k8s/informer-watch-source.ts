/**
 * What `/k8s` watches read of an informer (k8s/watch-hub.ts's WatchSource): its event log, its
 * resourceVersion marks and its consistent lists, bound to the log's incarnation. Its log reads are
 * noted as a reader's (Informer.noteWatchRead), so a storage ceiling's shrink holds for them.
 */
import type { Informer } from "../cache/informer.ts";
import { listAt, listFirstPage } from "../cache/versioned-list.ts";
import type { WatchSource } from "./watch-source.ts";

export function watchSourceOf(informer: Informer): WatchSource {
  return {
    incarnation: informer.log.incarnation(),
    read: (after, limit, maxBytes) => {
      informer.noteWatchRead(after);
      return informer.log.read(after, limit, maxBytes);
    },
    bounds: () => informer.log.bounds(),
    cacheResourceVersion: () => informer.queryView().resourceVersion,
    listAt: (query, from) => {
      if (from) return listAt(informer.indexer, informer.log, query, from);
      // The RV of the state the first page lists, read in the same synchronous turn (review N2).
      const { resourceVersion } = informer.queryView();
      const page = listFirstPage(informer.indexer, informer.log, query, informer.snapshotPosition());
      return page.expired ? page : { ...page, resourceVersion };
    },
    positionOf: (rv) => informer.positionOf(rv),
    fromEarlierServer: (rv) => informer.fromEarlierServer(rv),
    boundaryAfter: (after, span) => informer.boundaryAfter(after, span),
    readInOrder: (after, end, skip, limit) => {
      informer.noteWatchRead(after);
      return informer.log.readInOrder(after, end, skip, limit);
    },
  };
}
