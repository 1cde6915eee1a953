/**
 * Go's `encoding/base64` decoding (StdEncoding, padded, and RawStdEncoding, unpadded), with
 * its error: the API server decodes a Secret's `data` with it (`illegal base64 data at input
 * byte 4`), and the kubelet an `auth` entry of a docker config. Node's `Buffer.from(…,
 * 'base64')` accepts anything, so it cannot tell what those two refuse.
 */

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const DECODE = new Int16Array(256).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) DECODE[ALPHABET.charCodeAt(i)] = i;

const PAD = 0x3d;

function isNewline(c: number | undefined): boolean {
  return c === 0x0a || c === 0x0d;
}

/** `base64.CorruptInputError`'s text. */
function corrupt(offset: number): { error: string } {
  return { error: `illegal base64 data at input byte ${offset}` };
}

/**
 * Decodes `text` (its UTF-8 bytes) as Go's `Encoding.DecodeString` does: newlines are skipped,
 * a padded encoding needs its `=`, nothing may follow the padding. The error names the byte
 * offset Go names.
 */
export function goBase64Decode(text: string, padded = true): { bytes: Buffer } | { error: string } {
  const src = Buffer.from(text, 'utf8');
  const out: number[] = [];
  let si = 0;
  while (si < src.length) {
    const quantum = [0, 0, 0, 0];
    let length = 4;
    let trailing: { error: string } | undefined;
    for (let j = 0; j < 4; j++) {
      if (si === src.length) {
        if (j === 0) return { bytes: Buffer.from(out) };
        if (j === 1 || padded) return corrupt(si - j);
        length = j;
        break;
      }
      const c = src[si] ?? 0;
      si++;
      const value = DECODE[c] ?? -1;
      if (value >= 0) {
        quantum[j] = value;
        continue;
      }
      if (isNewline(c)) {
        j--;
        continue;
      }
      if (!padded || c !== PAD) return corrupt(si - 1);
      // Padding: only in the last two places, and `==` when two are missing.
      if (j < 2) return corrupt(si - 1);
      if (j === 2) {
        while (si < src.length && isNewline(src[si])) si++;
        if (si === src.length) return corrupt(src.length);
        if (src[si] !== PAD) return corrupt(si - 1);
        si++;
      }
      while (si < src.length && isNewline(src[si])) si++;
      if (si < src.length) trailing = corrupt(si);
      length = j;
      break;
    }
    const bits = ((quantum[0] ?? 0) << 18) | ((quantum[1] ?? 0) << 12) | ((quantum[2] ?? 0) << 6) | (quantum[3] ?? 0);
    const bytes = [(bits >> 16) & 0xff, (bits >> 8) & 0xff, bits & 0xff];
    out.push(...bytes.slice(0, length - 1));
    if (trailing) return trailing;
    if (length < 4) break;
  }
  return { bytes: Buffer.from(out) };
}
