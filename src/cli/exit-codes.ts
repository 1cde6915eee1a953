/** Exit codes shared by every command: 0 fine, 1 the probe/pod said no, 2 bad input or errored. */
export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;
/** A run killed by a second Ctrl-C: 128 + SIGINT, what shells report for an interrupted command. */
export const EXIT_INTERRUPTED = 130;
