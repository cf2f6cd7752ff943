// CRC-32C of a concatenation from the CRCs of its parts, without reading the
// bytes again (the GF(2) polynomial arithmetic of zlib's crc32_combine, for
// the Castagnoli polynomial). Pure arithmetic: no byte of the parts is read.

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

/**
 * BYTE_SHIFT[1024 * k + 256 * j + v]: the byte v at byte j of a CRC, shifted
 * over 2^k bytes. Shifting is linear in the CRC, so four lookups shift a whole
 * CRC. Level k is built on first use (32 multiplications and 1024 XORs).
 */
const SHIFT_LEVELS = 53;
const BYTE_SHIFT = new Int32Array(1024 * SHIFT_LEVELS);
const shiftLevelBuilt: boolean[] = [];

function buildShiftLevel(k: number): void {
  const op = x2nModP(1, 3 + k); // x^(8 * 2^k)
  const basis: number[] = [];
  for (let b = 0; b < 32; b++) basis.push(multModP(op, (1 << b) >>> 0));
  const base = 1024 * k;
  for (let j = 0; j < 4; j++) {
    for (let v = 1; v < 256; v++) {
      const low = v & -v;
      BYTE_SHIFT[base + 256 * j + v] = (BYTE_SHIFT[base + 256 * j + (v ^ low)] as number) ^ (basis[8 * j + 31 - Math.clz32(low)] as number);
    }
  }
  shiftLevelBuilt[k] = true;
}

/**
 * `crc` shifted over `length` bytes (crc * x^(8 * length)): four table lookups
 * per set bit of the length, much cheaper than building the operator when each
 * length is used once.
 */
export function crc32cShiftCrc(crc: number, length: number): number {
  if (!Number.isSafeInteger(length) || length < 0) throw new RangeError(`invalid length ${length}`);
  let c = crc | 0;
  for (let k = 0, n = length; n > 0; k++, n = n > 0x7fffffff ? Math.floor(n / 2) : n >>> 1) {
    if ((n & 1) === 0) continue;
    if (shiftLevelBuilt[k] !== true) buildShiftLevel(k);
    const t = 1024 * k;
    c =
      (BYTE_SHIFT[t + (c & 0xff)] as number) ^
      (BYTE_SHIFT[t + 256 + ((c >>> 8) & 0xff)] as number) ^
      (BYTE_SHIFT[t + 512 + ((c >>> 16) & 0xff)] as number) ^
      (BYTE_SHIFT[t + 768 + (c >>> 24)] as number);
  }
  return c >>> 0;
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
