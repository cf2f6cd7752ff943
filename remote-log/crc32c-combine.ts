// CRC-32C of a concatenation from the CRCs of its parts, without reading the
// bytes again (the GF(2) polynomial arithmetic of zlib's crc32_combine, for
// the Castagnoli polynomial). Pure arithmetic: about 32 * log2(length) steps.

/** The reflected Castagnoli polynomial. */
const POLY = 0x82f63b78;

/** a * b modulo the polynomial (reflected bit order: bit 31 is x^0). */
function multModP(a: number, b: number): number {
  let m = 0x80000000;
  let p = 0;
  for (;;) {
    if ((a & m) !== 0) {
      p ^= b;
      if ((a & (m - 1)) === 0) break;
    }
    m >>>= 1;
    b = (b & 1) !== 0 ? (b >>> 1) ^ POLY : b >>> 1;
  }
  return p >>> 0;
}

/** X2N[k] = x^(2^k) modulo the polynomial. */
const X2N: number[] = (() => {
  const t: number[] = [];
  let p = 0x40000000; // x^1
  for (let k = 0; k < 32; k++) {
    t.push(p);
    p = multModP(p, p);
  }
  return t;
})();

/** x^(n * 2^k) modulo the polynomial. */
function x2nModP(n: number, k: number): number {
  let p = 0x80000000; // x^0
  while (n > 0) {
    if (n % 2 === 1) p = multModP(X2N[k & 31] as number, p);
    n = Math.floor(n / 2);
    k++;
  }
  return p;
}

/** The operator that shifts a CRC over `length` zero bytes; reuse it for many parts of one length. */
export function crc32cShift(length: number): number {
  if (!Number.isSafeInteger(length) || length < 0) throw new RangeError(`invalid length ${length}`);
  return x2nModP(length, 3);
}

/** CRC-32C of A followed by B, given crc(A), crc(B) and B's length (or crc32cShift of it). */
export function crc32cCombine(crcA: number, crcB: number, lengthB: number, shift = crc32cShift(lengthB)): number {
  return (multModP(shift, crcA) ^ crcB) >>> 0;
}
