/**
 * The benchmark's data model: a Companies table and a Deals table with a field of every type,
 * plus the word lists the SQL loader and the write workloads draw values from.
 */

export const STATUS_OPTIONS = ['Lead', 'Qualified', 'Proposal', 'Won', 'Lost'] as const;
export const TAG_OPTIONS = ['hot', 'cold', 'enterprise', 'smb', 'partner', 'inbound'] as const;
export const INDUSTRY_OPTIONS = ['Manufacturing', 'Retail', 'Finance', 'Health', 'Energy'] as const;

export const ORGS = [
  'Acme',
  'Globex',
  'Initech',
  'Umbrella',
  'Hooli',
  'Stark',
  'Wayne',
  'Wonka',
  'Tyrell',
  'Cyberdyne',
  'Soylent',
  'Vandelay',
  'Piper',
  'Aperture',
  'Monarch',
  'Oscorp',
  'Gringotts',
  'Nakatomi',
  'Dunder',
  'Prestige',
] as const;
/** One of four per Name: `contains 'software'` matches about 25% of Deals (non-selective). */
export const SECTORS = ['Software', 'Hardware', 'Services', 'Logistics'] as const;
export const KINDS = [
  'renewal',
  'expansion',
  'pilot',
  'upgrade',
  'migration',
  'support',
  'license',
  'onboarding',
] as const;
/** Appended to about 0.1% of Names: `contains 'zephyr'` is the selective text filter. */
export const RARE_WORD = 'zephyr';
export const RARE_SHARE = 0.001;
export const NOTE_WORDS = [
  'call',
  'scheduled',
  'follow',
  'up',
  'with',
  'procurement',
  'legal',
  'review',
  'budget',
  'approved',
  'pending',
  'quote',
  'sent',
  'champion',
  'left',
  'company',
  'asked',
  'for',
  'discount',
  'demo',
] as const;

export { select } from '../lib/sql-dataset';

import { select } from '../lib/sql-dataset';

export const COMPANIES_FIELDS = [
  { name: 'Name', type: 'single_line_text' },
  { name: 'Industry', type: 'single_select', template: select(INDUSTRY_OPTIONS) },
  { name: 'Employees', type: 'number' },
] as const;

/** Every field type, plus Ref: the unique key upserts match on. */
export const DEALS_FIELDS = [
  { name: 'Name', type: 'single_line_text' },
  { name: 'Notes', type: 'long_text' },
  { name: 'Email', type: 'email' },
  { name: 'Website', type: 'url' },
  { name: 'Phone', type: 'phone_number' },
  { name: 'Quantity', type: 'number' },
  { name: 'Amount', type: 'currency' },
  { name: 'Probability', type: 'percent' },
  { name: 'Rating', type: 'rating' },
  { name: 'Duration', type: 'duration' },
  { name: 'CloseDate', type: 'date' },
  { name: 'LastContact', type: 'datetime' },
  { name: 'Status', type: 'single_select', template: select(STATUS_OPTIONS) },
  { name: 'Tags', type: 'multiple_select', template: select(TAG_OPTIONS) },
  { name: 'Won', type: 'checkbox' },
  { name: 'Files', type: 'attachments' },
  { name: 'Company', type: 'linked_record', template: { tableId: 'Companies' } },
  { name: 'Ref', type: 'single_line_text' },
] as const;

export type DealsFieldName = (typeof DEALS_FIELDS)[number]['name'];
export type CompaniesFieldName = (typeof COMPANIES_FIELDS)[number]['name'];

export interface Dataset {
  databaseId: string;
  schemaName: string;
  /** Name is the primary field: what `expand` on Deals' Company shows of a company. */
  companies: { tableId: string; fieldIds: Record<CompaniesFieldName, string>; ids: string[] };
  deals: {
    tableId: string;
    fieldIds: Record<DealsFieldName, string>;
    /** Column fields in table order (every field but Company). */
    columnFieldIds: string[];
  };
  /** Records loaded into Deals; rows past loadedMaxSeq were written by a benchmark run. */
  rows: number;
  loadedMaxSeq: number;
  load: { reused: boolean; seconds: number; steps: [step: string, seconds: number][] };
}
