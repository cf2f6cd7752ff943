// The screenshot checks' PNG decoder against images encoded here with every
// scanline filter, in RGB and RGBA.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { deflateSync } from 'node:zlib';
import { countColor, countNonBackground, decodePng } from './png.js';

function crc32(buf: Buffer): number {
  let c = ~0;
  for (const byte of buf) {
    c ^= byte;
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  }
  return ~c >>> 0;
}

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

function paeth(a: number, b: number, c: number): number {
  const p = a + b - c;
  const pa = Math.abs(p - a);
  const pb = Math.abs(p - b);
  const pc = Math.abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/** Encodes `pixels` (channels per pixel) with row y filtered by filter y % 5. */
function encode(width: number, height: number, channels: 3 | 4, pixels: Buffer): Buffer {
  const stride = width * channels;
  const rows: Buffer[] = [];
  for (let y = 0; y < height; y++) {
    const filter = y % 5;
    const cur = pixels.subarray(y * stride, (y + 1) * stride);
    const prev = y === 0 ? Buffer.alloc(stride) : pixels.subarray((y - 1) * stride, y * stride);
    const out = Buffer.alloc(stride + 1);
    out[0] = filter;
    for (let i = 0; i < stride; i++) {
      const a = i >= channels ? (cur[i - channels] as number) : 0;
      const b = prev[i] as number;
      const c = i >= channels ? (prev[i - channels] as number) : 0;
      const pred = [0, a, b, (a + b) >> 1, paeth(a, b, c)][filter] as number;
      out[i + 1] = ((cur[i] as number) - pred) & 0xff;
    }
    rows.push(out);
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8;
  ihdr[9] = channels === 4 ? 6 : 2;
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(Buffer.concat(rows))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

function pattern(width: number, height: number, channels: 3 | 4): Buffer {
  const px = Buffer.alloc(width * height * channels);
  for (let i = 0; i < px.length; i++) px[i] = (i * 37 + Math.floor(i / 7) * 11) & 0xff;
  return px;
}

describe('decodePng', () => {
  for (const channels of [3, 4] as const) {
    it(`decodes ${channels === 3 ? 'RGB' : 'RGBA'} with all five filters`, () => {
      const width = 13;
      const height = 11;
      const px = pattern(width, height, channels);
      const img = decodePng(encode(width, height, channels, px));
      assert.equal(img.width, width);
      assert.equal(img.height, height);
      for (let p = 0; p < width * height; p++) {
        for (let ch = 0; ch < 3; ch++) assert.equal(img.pixels[p * 4 + ch], px[p * channels + ch]);
        assert.equal(img.pixels[p * 4 + 3], channels === 4 ? px[p * 4 + 3] : 255);
      }
    });
  }

  it('counts pixels of a colour and pixels off the background', () => {
    const width = 10;
    const height = 4;
    const px = Buffer.alloc(width * height * 3, 255);
    for (let x = 2; x < 7; x++) px.set([0x2f, 0x64, 0xd6], (1 * width + x) * 3);
    px.set([0x30, 0x66, 0xd0], (2 * width + 0) * 3);
    const img = decodePng(encode(width, height, 3, px));
    assert.equal(countColor(img, [0x2f, 0x64, 0xd6], 0), 5);
    assert.equal(countColor(img, [0x2f, 0x64, 0xd6], 8), 6);
    assert.equal(countNonBackground(img), 6);
  });

  it('refuses what it does not decode', () => {
    assert.throws(() => decodePng(Buffer.from('not a png')), /not a PNG/);
  });
});
