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

/**
 * X2N[k] = x^(2^k) modulo the polynomial, grown on demand. Unlike zlib's CRC-32
 * table it does not wrap at k = 32: for the Castagnoli polynomial x^(2^32) is
 * x^2, not x, so wrapping would give wrong shifts from 2^29 bytes on.
 */
const X2N: number[] = [0x40000000]; // x^1

function x2n(k: number): number {
  while (X2N.length <= k) {
    const last = X2N[X2N.length - 1] as number;
    X2N.push(multModP(last, last));
  }
  return X2N[k] as number;
}

/** x^(n * 2^k) modulo the polynomial. */
function x2nModP(n: number, k: number): number {
  let p = 0x80000000; // x^0
  while (n > 0) {
    if (n % 2 === 1) p = multModP(x2n(k), p);
    n = Math.floor(n / 2);
    k++;
  }
  return p;
}

/** Lengths are taken DIGIT_BITS at a time, one table of operators per digit position. */
const DIGIT_BITS = 10;
const DIGIT_MASK = (1 << DIGIT_BITS) - 1;
/** SHIFT_TABLES[k][d] = x^(8 * d * 2^(DIGIT_BITS * k)): the shift over d << (DIGIT_BITS * k) bytes. Built on first use. */
const SHIFT_TABLES: Uint32Array[] = [];

function shiftTable(k: number): Uint32Array {
  let t = SHIFT_TABLES[k];
  if (t === undefined) {
    t = new Uint32Array(DIGIT_MASK + 1);
    t[0] = 0x80000000; // x^0
    const step = x2nModP(1, 3 + DIGIT_BITS * k);
    for (let d = 1; d <= DIGIT_MASK; d++) t[d] = multModP(step, t[d - 1] as number);
    SHIFT_TABLES[k] = t;
  }
  return t;
}

/**
 * `crc` followed by `length` zero bytes' worth of shift (crc * x^(8 * length)):
 * one multiplication per non-zero 10-bit digit of the length (two below 1 MiB),
 * cheaper than building the operator when each length is used once.
 */
export function crc32cShiftCrc(crc: number, length: number): number {
  if (!Number.isSafeInteger(length) || length < 0) throw new RangeError(`invalid length ${length}`);
  let c = crc >>> 0;
  for (let k = 0, n = length; n > 0; k++, n = Math.floor(n / (DIGIT_MASK + 1))) {
    const d = n & DIGIT_MASK;
    if (d !== 0) c = multModP(shiftTable(k)[d] as number, c);
  }
  return c;
}

/** The operator that shifts a CRC over `length` zero bytes; reuse it for many parts of one length. */
export function crc32cShift(length: number): number {
  if (!Number.isSafeInteger(length) || length < 0) throw new RangeError(`invalid length ${length}`);
  return x2nModP(length, 3);
}

/** CRC-32C of A followed by B, given crc(A), crc(B) and B's length (or crc32cShift of it). */
export function crc32cCombine(crcA: number, crcB: number, lengthB: number, shift?: number): number {
  if (shift === undefined) return (crc32cShiftCrc(crcA, lengthB) ^ crcB) >>> 0;
  return (multModP(shift, crcA) ^ crcB) >>> 0;
}
