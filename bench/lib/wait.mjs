/**
 * What the harness needs of a load (probelet or baseline), and a bounded wait for it to
 * wind down.
 */

/**
 * @typedef {object} Load
 * @property {() => void} add            Starts every worker.
 * @property {() => Promise<void>} remove Stops every worker; resolves once none is left and no probe is in flight.
 * @property {() => number} workerCount
 */

/**
 * Polls `done` once per event-loop turn (setImmediate: no timer granularity in what is
 * measured) for the first 50 ms, then every millisecond so a long wait does not spin a
 * core, until it holds or `limitMs` passed.
 * @param {() => boolean} done
 * @param {number} limitMs
 */
export async function waitUntil(done, limitMs) {
  const start = performance.now();
  while (!done()) {
    const waited = performance.now() - start;
    if (waited > limitMs) throw new Error(`still busy after ${limitMs} ms`);
    await new Promise((resolve) => (waited < 50 ? setImmediate(resolve) : setTimeout(resolve, 1)));
  }
}
