import { crc32, deflateRawSync } from 'node:zlib';

/**
 * The hostile tenant's import bombs: workbooks of a few kilobytes that would expand to far more
 * than their size. Zipped by hand, as exceljs would never write them; the
 * same two the import tests use, which the import worker must end `failed` with memory flat.
 */

const MAIN = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
const RELATIONSHIPS = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';

const uint16 = (value: number) => {
  const bytes = Buffer.alloc(2);
  bytes.writeUInt16LE(value);
  return bytes;
};
const uint32 = (value: number) => {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32LE(value >>> 0);
  return bytes;
};

/** A deflated zip: local headers with sizes, a central directory, an end record. */
function zip(entries: { name: string; data: string }[]): Buffer {
  const parts: Buffer[] = [];
  const directory: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.name, 'utf8');
    const data = Buffer.from(entry.data, 'utf8');
    const compressed = deflateRawSync(data);
    // version, UTF-8 names, deflate, DOS time and date; then CRC, sizes, name length, no extra
    const fields = [uint16(20), uint16(0x0800), uint16(8), uint16(0), uint16(0x21)];
    const sizes = [
      uint32(crc32(data)),
      uint32(compressed.length),
      uint32(data.length),
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

/** A one-sheet workbook of these rows and shared strings. */
function workbook(rows: string, sharedStrings: string): Buffer {
  const rels = (...entries: [string, string, string][]) =>
    `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">${entries
      .map(
        ([id, type, target]) =>
          `<Relationship Id="${id}" Type="${RELATIONSHIPS}/${type}" Target="${target}"/>`,
      )
      .join('')}</Relationships>`;
  return zip([
    { name: '_rels/.rels', data: rels(['rId1', 'officeDocument', 'xl/workbook.xml']) },
    {
      name: 'xl/workbook.xml',
      data: `<workbook xmlns="${MAIN}" xmlns:r="${RELATIONSHIPS}"><sheets><sheet name="S" sheetId="1" r:id="rId1"/></sheets></workbook>`,
    },
    {
      name: 'xl/_rels/workbook.xml.rels',
      data: rels(
        ['rId1', 'worksheet', 'worksheets/sheet1.xml'],
        ['rId2', 'sharedStrings', 'sharedStrings.xml'],
      ),
    },
    {
      name: 'xl/worksheets/sheet1.xml',
      data: `<worksheet xmlns="${MAIN}"><sheetData>${rows}</sheetData></worksheet>`,
    },
    { name: 'xl/sharedStrings.xml', data: `<sst xmlns="${MAIN}">${sharedStrings}</sst>` },
  ]);
}

export interface ImportBomb {
  name: string;
  file: Buffer;
}

/** Built once per run: a few hundred milliseconds of deflate. */
export function importBombs(): ImportBomb[] {
  return [
    {
      // 15 MB of XML in a zip of a few kB: a table of millions of strings before any row.
      name: '3,000,000 empty shared strings',
      file: workbook('<row r="1"><c><v>1</v></c></row>', '<si/>'.repeat(3_000_000)),
    },
    {
      // 400 million characters for staging from some 20 kB.
      name: 'one 100,000-character shared string in 4,000 cells',
      file: workbook(
        Array.from(
          { length: 1_000 },
          (_, i) => `<row r="${i + 1}">${'<c t="s"><v>0</v></c>'.repeat(4)}</row>`,
        ).join(''),
        `<si><t>${'y'.repeat(100_000)}</t></si>`,
      ),
    },
  ];
}
