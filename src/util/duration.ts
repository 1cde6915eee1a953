/**
 * Go's `time.Duration.String()` for whole milliseconds, because a few kubelet messages
 * print durations that way (`within 1s`, `back-off 1m20s`, `5m0s`) and users grep for them.
 */
export function formatGoDuration(ms: number): string {
  if (ms === 0) return '0s';
  const sign = ms < 0 ? '-' : '';
  let rest = Math.abs(ms);
  if (rest < 1000) return `${sign}${trimNumber(rest)}ms`;
  const hours = Math.floor(rest / 3_600_000);
  rest -= hours * 3_600_000;
  const minutes = Math.floor(rest / 60_000);
  rest -= minutes * 60_000;
  const seconds = `${trimNumber(rest / 1000)}s`;
  if (hours > 0) return `${sign}${hours}h${minutes}m${seconds}`;
  if (minutes > 0) return `${sign}${minutes}m${seconds}`;
  return `${sign}${seconds}`;
}

function trimNumber(n: number): string {
  return String(Number(n.toFixed(9)));
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * `30s`, `2m`, `1m30s`, `1.5h`, `500ms` (Go's `time.ParseDuration` units) or plain seconds
 * (`45`), in whole milliseconds; undefined when the text is none of these. The one parser
 * behind every duration a user types (`probelet run --timeout`, simulate's scripts).
 */
export function parseDurationMs(text: string): number | undefined {
  const trimmed = text.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  if (!/^(\d+(\.\d+)?(ms|s|m|h))+$/.test(trimmed)) return undefined;
  let ms = 0;
  for (const [, value, unit] of trimmed.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/gy)) {
    ms += Number(value) * (UNIT_MS[unit ?? ''] ?? Number.NaN);
  }
  return Number.isFinite(ms) ? Math.round(ms) : undefined;
}
