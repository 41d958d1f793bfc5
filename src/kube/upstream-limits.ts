/**
 * How much of one upstream JSON value the decoders hold before refusing it (issue 17, review A9):
 * a watch line, or a list item or list member. etcd refuses objects over 1.5 MiB by default
 * (`--max-request-bytes`), so a real object with its JSON envelope stays well under 3 MiB; a longer
 * value comes from a hostile or broken server, proxy or tunnel origin, and buffering it whole could
 * exhaust the isolate that several objects share. The decoders stop at the bound and throw.
 */
export const MAX_UPSTREAM_ITEM_BYTES = 3 * 1024 * 1024;

/** The bound as messages state it. */
export const MAX_UPSTREAM_ITEM_TEXT = `${MAX_UPSTREAM_ITEM_BYTES / (1024 * 1024)} MiB`;
