import { crc32, deflateRawSync } from 'node:zlib';

/** Zips written byte by byte, for tests of what reads them: honest ones, and ones that lie. */

export interface ZipEntry {
  name: string;
  data: string | Buffer;
  /** The uncompressed size the zip declares, when it should lie. */
  declaredSize?: number;
}

function uint16(value: number): Buffer {
  const bytes = Buffer.alloc(2);
  bytes.writeUInt16LE(value);
  return bytes;
}

function uint32(value: number): Buffer {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32LE(value >>> 0);
  return bytes;
}

/** A deflated zip: local headers with sizes, a central directory, an end record. */
export function zip(entries: ZipEntry[]): Buffer {
  const parts: Buffer[] = [];
  const directory: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.name, 'utf8');
    const data = Buffer.from(entry.data);
    const compressed = deflateRawSync(data);
    const size = entry.declaredSize ?? data.length;
    // version, UTF-8 names, deflate, DOS time and date
    const fields = [uint16(20), uint16(0x0800), uint16(8), uint16(0), uint16(0x21)];
    const sizes = [
      uint32(crc32(data)),
      uint32(compressed.length),
      uint32(size),
      uint16(name.length),
      uint16(0),
    ];
    const local = Buffer.concat([uint32(0x04034b50), ...fields, ...sizes, name, compressed]);
    directory.push(
      Buffer.concat([
        uint32(0x02014b50),
        uint16(20),
        ...fields,
        ...sizes,
        uint16(0),
        uint16(0),
        uint16(0),
        uint32(0),
        uint32(offset),
        name,
      ]),
    );
    parts.push(local);
    offset += local.length;
  }
  const central = Buffer.concat(directory);
  const end = Buffer.concat([
    uint32(0x06054b50),
    uint16(0),
    uint16(0),
    uint16(entries.length),
    uint16(entries.length),
    uint32(central.length),
    uint32(offset),
    uint16(0),
  ]);
  return Buffer.concat([...parts, central, end]);
}
