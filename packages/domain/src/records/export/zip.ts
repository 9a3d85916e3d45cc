import { pipeline, Readable } from 'node:stream';
import { constants, crc32, createDeflateRaw, deflateRawSync } from 'node:zlib';

/**
 * A zip archive written in one pass as its entries stream in (an XLSX file is one): each entry
 * deflated as it comes, its CRC and sizes in a data descriptor after it (flag bit 3), then the
 * central directory. Past 4 GiB (a large sheet, uncompressed) the sizes and offsets go in ZIP64
 * records, as APPNOTE 4.3.9 and 4.4 allow; below, the archive is the plain format every reader
 * takes. Bytes are produced only as fast as the consumer takes them.
 */

export interface ZipEntry {
  name: string;
  /** The entry's bytes: text (UTF-8) or chunks of it, produced as they are needed. */
  data: string | AsyncIterable<string | Uint8Array>;
}

const LOCAL_HEADER = 0x04034b50;
const DATA_DESCRIPTOR = 0x08074b50;
const CENTRAL_HEADER = 0x02014b50;
const ZIP64_END = 0x06064b50;
const ZIP64_LOCATOR = 0x07064b50;
const END_OF_CENTRAL_DIRECTORY = 0x06054b50;
/** Data descriptor follows (bit 3); names are UTF-8 (bit 11). */
const FLAGS = 0x0808;
const DEFLATE = 8;
const VERSION = 20;
const VERSION_ZIP64 = 45;
const MAX_32 = 0xffffffff;

/** Deflate's fastest level: a sheet's XML repeats itself so much that it still shrinks ~10x. */
const LEVEL = constants.Z_BEST_SPEED;

interface Written {
  name: Buffer;
  crc: number;
  compressed: number;
  size: number;
  offset: number;
}

/** MS-DOS date and time of `at`, as zip headers keep them (local time, 2-second steps). */
function dosDateTime(at: Date): { time: number; date: number } {
  return {
    time: (at.getHours() << 11) | (at.getMinutes() << 5) | Math.floor(at.getSeconds() / 2),
    date: (Math.max(0, at.getFullYear() - 1980) << 9) | ((at.getMonth() + 1) << 5) | at.getDate(),
  };
}

const toBuffer = (chunk: string | Uint8Array) =>
  typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;

export async function* zipArchive(
  entries: Iterable<ZipEntry>,
  at = new Date(),
): AsyncGenerator<Uint8Array, void, undefined> {
  const { time, date } = dosDateTime(at);
  const written: Written[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.name, 'utf8');
    const header = Buffer.alloc(30);
    header.writeUInt32LE(LOCAL_HEADER, 0);
    header.writeUInt16LE(VERSION, 4);
    header.writeUInt16LE(FLAGS, 6);
    header.writeUInt16LE(DEFLATE, 8);
    header.writeUInt16LE(time, 10);
    header.writeUInt16LE(date, 12);
    // CRC and sizes (offsets 14 to 25) stay 0: the data descriptor gives them.
    header.writeUInt16LE(name.length, 26);
    const record: Written = { name, crc: 0, compressed: 0, size: 0, offset };
    yield header;
    yield name;
    offset += header.length + name.length;
    if (typeof entry.data === 'string') {
      const bytes = Buffer.from(entry.data, 'utf8');
      const deflated = deflateRawSync(bytes, { level: LEVEL });
      Object.assign(record, { crc: crc32(bytes), size: bytes.length, compressed: deflated.length });
      yield deflated;
    } else {
      const source = entry.data;
      async function* counted() {
        for await (const chunk of source) {
          const bytes = toBuffer(chunk);
          record.crc = crc32(bytes, record.crc);
          record.size += bytes.length;
          yield bytes;
        }
      }
      // pipeline: an error on either side ends both, and leaving the loop early ends the source.
      const deflated = pipeline(Readable.from(counted()), createDeflateRaw({ level: LEVEL }), () => {});
      for await (const chunk of deflated as AsyncIterable<Buffer>) {
        record.compressed += chunk.length;
        yield chunk;
      }
    }
    offset += record.compressed;
    const large = record.size >= MAX_32 || record.compressed >= MAX_32;
    const descriptor = Buffer.alloc(large ? 24 : 16);
    descriptor.writeUInt32LE(DATA_DESCRIPTOR, 0);
    descriptor.writeUInt32LE(record.crc, 4);
    if (large) {
      descriptor.writeBigUInt64LE(BigInt(record.compressed), 8);
      descriptor.writeBigUInt64LE(BigInt(record.size), 16);
    } else {
      descriptor.writeUInt32LE(record.compressed, 8);
      descriptor.writeUInt32LE(record.size, 12);
    }
    yield descriptor;
    offset += descriptor.length;
    written.push(record);
  }

  const directoryOffset = offset;
  for (const entry of written) {
    // ZIP64 extra field: only the values that do not fit, in this order (APPNOTE 4.5.3).
    const wide = [
      entry.size >= MAX_32 ? entry.size : undefined,
      entry.compressed >= MAX_32 ? entry.compressed : undefined,
      entry.offset >= MAX_32 ? entry.offset : undefined,
    ].filter((value): value is number => value !== undefined);
    const extra = Buffer.alloc(wide.length > 0 ? 4 + 8 * wide.length : 0);
    if (wide.length > 0) {
      extra.writeUInt16LE(0x0001, 0);
      extra.writeUInt16LE(8 * wide.length, 2);
      wide.forEach((value, i) => {
        extra.writeBigUInt64LE(BigInt(value), 4 + 8 * i);
      });
    }
    const header = Buffer.alloc(46);
    header.writeUInt32LE(CENTRAL_HEADER, 0);
    header.writeUInt16LE(wide.length > 0 ? VERSION_ZIP64 : VERSION, 4);
    header.writeUInt16LE(wide.length > 0 ? VERSION_ZIP64 : VERSION, 6);
    header.writeUInt16LE(FLAGS, 8);
    header.writeUInt16LE(DEFLATE, 10);
    header.writeUInt16LE(time, 12);
    header.writeUInt16LE(date, 14);
    header.writeUInt32LE(entry.crc, 16);
    header.writeUInt32LE(Math.min(entry.compressed, MAX_32), 20);
    header.writeUInt32LE(Math.min(entry.size, MAX_32), 24);
    header.writeUInt16LE(entry.name.length, 28);
    header.writeUInt16LE(extra.length, 30);
    header.writeUInt32LE(Math.min(entry.offset, MAX_32), 42);
    yield Buffer.concat([header, entry.name, extra]);
    offset += header.length + entry.name.length + extra.length;
  }
  const directorySize = offset - directoryOffset;
  const zip64 = directoryOffset >= MAX_32 || directorySize >= MAX_32;
  if (zip64) {
    const end64 = Buffer.alloc(56);
    end64.writeUInt32LE(ZIP64_END, 0);
    end64.writeBigUInt64LE(44n, 4);
    end64.writeUInt16LE(VERSION_ZIP64, 12);
    end64.writeUInt16LE(VERSION_ZIP64, 14);
    end64.writeBigUInt64LE(BigInt(written.length), 24);
    end64.writeBigUInt64LE(BigInt(written.length), 32);
    end64.writeBigUInt64LE(BigInt(directorySize), 40);
    end64.writeBigUInt64LE(BigInt(directoryOffset), 48);
    const locator = Buffer.alloc(20);
    locator.writeUInt32LE(ZIP64_LOCATOR, 0);
    locator.writeBigUInt64LE(BigInt(offset), 8);
    locator.writeUInt32LE(1, 16);
    yield Buffer.concat([end64, locator]);
  }
  const end = Buffer.alloc(22);
  end.writeUInt32LE(END_OF_CENTRAL_DIRECTORY, 0);
  end.writeUInt16LE(written.length, 8);
  end.writeUInt16LE(written.length, 10);
  end.writeUInt32LE(Math.min(directorySize, MAX_32), 12);
  end.writeUInt32LE(zip64 ? MAX_32 : directoryOffset, 16);
  yield end;
}
