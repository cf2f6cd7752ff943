// A small PNG decoder for the console's screenshot checks: 8-bit RGB or RGBA,
// not interlaced (what Chromium's screenshots are), all five scanline filters.
// Returns RGBA pixels.
import { inflateSync } from 'node:zlib';

export interface Image {
  readonly width: number;
  readonly height: number;
  /** RGBA, row by row. */
  readonly pixels: Buffer;
}

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

export function decodePng(png: Buffer): Image {
  if (png.length < 8 || !png.subarray(0, 8).equals(SIGNATURE)) throw new Error('not a PNG');
  let pos = 8;
  let width = 0;
  let height = 0;
  let channels = 0;
  const idat: Buffer[] = [];
  while (pos + 8 <= png.length) {
    const length = png.readUInt32BE(pos);
    const type = png.toString('latin1', pos + 4, pos + 8);
    const data = png.subarray(pos + 8, pos + 8 + length);
    pos += 12 + length;
    if (type === 'IHDR') {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      const bitDepth = data[8];
      const colorType = data[9];
      const interlace = data[12];
      if (bitDepth !== 8 || (colorType !== 2 && colorType !== 6) || interlace !== 0) {
        throw new Error(`unsupported PNG: bit depth ${bitDepth}, color type ${colorType}, interlace ${interlace}`);
      }
      channels = colorType === 6 ? 4 : 3;
    } else if (type === 'IDAT') {
      idat.push(data);
    } else if (type === 'IEND') {
      break;
    }
  }
  if (channels === 0) throw new Error('PNG without IHDR');
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const out = Buffer.alloc(width * height * 4);
  let prev = Buffer.alloc(stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const line = Buffer.from(raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1)));
    for (let i = 0; i < stride; i++) {
      const a = i >= channels ? (line[i - channels] as number) : 0;
      const b = prev[i] as number;
      const c = i >= channels ? (prev[i - channels] as number) : 0;
      let add = 0;
      switch (filter) {
        case 0: add = 0; break;
        case 1: add = a; break;
        case 2: add = b; break;
        case 3: add = (a + b) >> 1; break;
        case 4: {
          const p = a + b - c;
          const pa = Math.abs(p - a);
          const pb = Math.abs(p - b);
          const pc = Math.abs(p - c);
          add = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
          break;
        }
        default: throw new Error(`bad PNG filter ${filter} on row ${y}`);
      }
      line[i] = ((line[i] as number) + add) & 0xff;
    }
    for (let x = 0; x < width; x++) {
      const o = (y * width + x) * 4;
      out[o] = line[x * channels] as number;
      out[o + 1] = line[x * channels + 1] as number;
      out[o + 2] = line[x * channels + 2] as number;
      out[o + 3] = channels === 4 ? (line[x * channels + 3] as number) : 255;
    }
    prev = line;
  }
  return { width, height, pixels: out };
}

/** Pixels within `tolerance` (per channel) of an RGB colour. */
export function countColor(img: Image, rgb: readonly [number, number, number], tolerance = 12): number {
  let n = 0;
  for (let o = 0; o < img.pixels.length; o += 4) {
    if (
      Math.abs((img.pixels[o] as number) - rgb[0]) <= tolerance &&
      Math.abs((img.pixels[o + 1] as number) - rgb[1]) <= tolerance &&
      Math.abs((img.pixels[o + 2] as number) - rgb[2]) <= tolerance
    ) n++;
  }
  return n;
}

/** Pixels that differ from the top-left pixel (the background) by more than `tolerance` in some channel. */
export function countNonBackground(img: Image, tolerance = 8): number {
  const bg = [img.pixels[0] ?? 0, img.pixels[1] ?? 0, img.pixels[2] ?? 0];
  let n = 0;
  for (let o = 0; o < img.pixels.length; o += 4) {
    if (
      Math.abs((img.pixels[o] as number) - (bg[0] as number)) > tolerance ||
      Math.abs((img.pixels[o + 1] as number) - (bg[1] as number)) > tolerance ||
      Math.abs((img.pixels[o + 2] as number) - (bg[2] as number)) > tolerance
    ) n++;
  }
  return n;
}
