import { randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';

// ---- Tiny real samples. What `file-type` 21 reports for each, and so the rule of libs/storage/src/sniff.ts:
// pdf → application/pdf; .doc → application/x-cfb (+ a `WordDocument` stream required); docx (a zip
// with word/document.xml) → the docx type, any other zip → application/zip (so a zip is a document
// only when it is a real docx declared as docx); ELF → application/x-elf; PE → application/x-msdownload;
// jpeg/png/webp → themselves; plain text and CSV → nothing (checked as UTF-8 without NUL instead).
// The pdf carries the binary comment line PDF writers put second (ISO 32000-1 §7.5.2 recommends
// it), so its bytes are not UTF-8 text, as a real PDF's are not.
export const pdf = (pad = 0) =>
  Buffer.concat([
    Buffer.from('%PDF-1.4\n%'),
    Buffer.from([0xe2, 0xe3, 0xcf, 0xd3]),
    Buffer.from('\n1 0 obj <<>> endobj\ntrailer <<>>\n'),
    Buffer.alloc(pad, 0x20),
  ]);
export const cfb = (withWordStream: boolean) =>
  Buffer.concat([
    Buffer.from('d0cf11e0a1b11ae1', 'hex'),
    Buffer.alloc(504),
    Buffer.from(withWordStream ? 'WordDocument' : 'SummaryInfo', 'utf16le'),
    Buffer.alloc(40),
  ]);
export function zip(entries: [string, string][]): Buffer {
  const locals: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const [name, text] of entries) {
    const data = Buffer.from(text);
    const n = Buffer.from(name);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt32LE(crc32(data), 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(n.length, 26);
    const entry = Buffer.alloc(46);
    entry.writeUInt32LE(0x02014b50, 0);
    entry.writeUInt16LE(20, 4);
    entry.writeUInt16LE(20, 6);
    entry.writeUInt32LE(crc32(data), 16);
    entry.writeUInt32LE(data.length, 20);
    entry.writeUInt32LE(data.length, 24);
    entry.writeUInt16LE(n.length, 28);
    entry.writeUInt32LE(offset, 42);
    locals.push(local, n, data);
    central.push(entry, n);
    offset += 30 + n.length + data.length;
  }
  const dir = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(dir.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, dir, end]);
}
const CONTENT_TYPES = `<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`;
export const docx = () =>
  zip([
    ['[Content_Types].xml', CONTENT_TYPES],
    ['word/document.xml', '<w:document/>'],
  ]);
export const png = (w: number, h: number) => {
  const b = Buffer.from(
    '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201a5f1e2b20000000049454e44ae426082',
    'hex',
  );
  b.writeUInt32BE(w, 16);
  b.writeUInt32BE(h, 20);
  return b;
};
export const jpeg = (w: number, h: number) =>
  Buffer.concat([
    Buffer.from('ffd8ffe000104a46494600010100000100010000', 'hex'),
    Buffer.from([
      0xff,
      0xc0,
      0,
      17,
      8,
      h >> 8,
      h & 255,
      w >> 8,
      w & 255,
      3,
      1,
      0x22,
      0,
      2,
      0x11,
      1,
      3,
      0x11,
      1,
    ]),
    Buffer.from('ffd9', 'hex'),
  ]);
export function webp(w: number, h: number) {
  const chunk = Buffer.from([0x2f, 0, 0, 0, 0]);
  chunk.writeUInt32LE((((w - 1) & 0x3fff) | (((h - 1) & 0x3fff) << 14)) >>> 0, 1);
  const body = Buffer.concat([Buffer.from('WEBPVP8L'), Buffer.from([5, 0, 0, 0]), chunk, Buffer.alloc(1)]);
  const riff = Buffer.alloc(8);
  riff.write('RIFF');
  riff.writeUInt32LE(body.length, 4);
  return Buffer.concat([riff, body]);
}
export const elf = () => Buffer.concat([Buffer.from('7f454c4602010100', 'hex'), randomBytes(200)]);
export const pe = () =>
  Buffer.concat([
    Buffer.from('MZ'),
    Buffer.alloc(58),
    Buffer.from([0x80, 0, 0, 0]),
    Buffer.alloc(64),
    Buffer.from('PE\0\0'),
  ]);

/** One part named `file`, as the SDK sends it; `type: null` sends the part without a Content-Type. */
export function form(fileName: string, type: string | null, bytes: Buffer, field = 'file') {
  const boundary = `----oan${randomBytes(8).toString('hex')}`;
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="${fileName}"\r\n${type === null ? '' : `Content-Type: ${type}\r\n`}\r\n`;
  return {
    payload: Buffer.concat([Buffer.from(head), bytes, Buffer.from(`\r\n--${boundary}--\r\n`)]),
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
  };
}
