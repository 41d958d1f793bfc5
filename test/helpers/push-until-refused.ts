/**
 * Feeds a decoder the same 64 KiB piece until it throws, for the tests of bounded upstream values
 * (issue 17): answers the error and how many units were pushed before it, which a bounded decoder
 * keeps within its bound.
 */
export const PIECE_UNITS = 64 * 1024;

export function pushUntilRefused(push: () => void): { error: unknown; pushed: number } {
  let pushed = 0;
  try {
    for (;;) {
      push();
      pushed += PIECE_UNITS;
    }
  } catch (error) {
    return { error, pushed };
  }
}
