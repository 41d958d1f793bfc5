/**
 * Where the checker's rules are looser than kube-apiserver's, on purpose: each entry is a choice
 * documented in docs/api.md, not a defect. The defects the checker found and that are fixed are in
 * FINDINGS.md; a defect found from now on fails the checker, it is not tolerated here.
 */
export const DEVIATIONS = {
  /**
   * C2 (FINDINGS.md): a relist's inferred deletes all carry the relist's RV, which an object's own
   * change can carry too (the newest object's RV is the list's RV when nothing else was written), so
   * a DELETED may share its RV with the event before it. And a watch from that RV is sent them again,
   * since a client cut among them cannot say which it saw: a DELETED at the watch's own start RV, for
   * a key the client may no longer hold. The API server never sends two events at one RV, nor one at
   * or below a watch's RV, but it infers no deletes either, and no RV exists for one; client-go's
   * and kube-rs' stores ignore a delete of a key they do not hold (docs/api.md, "inferred deletes").
   */
  inferredDeletesShareTheRelistRv: true,
} as const;
