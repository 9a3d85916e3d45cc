import type { Principal } from '@recordbase/contracts/api-keys';
import { UUID_PATTERN } from '@recordbase/contracts/common';
import { DomainError, invalid, notFound } from '@recordbase/contracts/domain-errors';
import { toDeliveredEventId } from '@recordbase/contracts/events';
import { VIEW_ID_PATTERN } from '@recordbase/contracts/views';
import {
  type CreatedWebhook,
  type CreateWebhookRequest,
  MAX_WEBHOOKS_PER_DATABASE,
  type RetryWebhookDeliveryResponse,
  type UpdateWebhookRequest,
  type Webhook,
  type WebhookDeliveryAttempt,
  type WebhookDeliveryError,
  type WebhookEventType,
} from '@recordbase/contracts/webhooks';
import {
  databaseErrorOf,
  deliveryRetryRequest,
  openDeliveryEventTypesQuery,
  type PrismaClient,
  subscriptionOf,
  type Tx,
  type ViewMembers,
  whyNoLongerHeard,
} from '@recordbase/db';
import { didYouMean } from '@recordbase/db/field-types';
import { findAccessibleDatabase, findTableByRef, nameKey } from './access';
import { canAccessDatabase, EVENT_READ_SCOPES, requireScope } from './access-policy';
import { announceMetadataChange } from './schema-tx';
import { newWebhookSecret, sealWebhookSecret } from './webhook-secrets';

const MAX_INT4 = 2_147_483_647;
const MAX_INT8 = 9_223_372_036_854_775_807n;

interface WebhookRow {
  id: number;
  databaseId: string;
  tableId: string | null;
  url: string;
  events: string[];
  fieldIds: string[];
  viewId: string | null;
  active: boolean;
  createdAt: Date;
  updatedAt: Date;
}

/** Everything but the secret, which is shown once at creation and never again. */
function toWebhookDto(row: WebhookRow): Webhook {
  return {
    id: row.id,
    url: row.url,
    events: row.events as WebhookEventType[],
    tableId: row.tableId,
    fieldIds: row.fieldIds.length > 0 ? row.fieldIds : null,
    viewId: row.viewId,
    active: row.active,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/** Webhook ids are positive int4; any other text cannot name one. */
function parseWebhookId(ref: string): number | null {
  if (!/^[1-9][0-9]{0,9}$/.test(ref)) return null;
  const id = Number(ref);
  return id <= MAX_INT4 ? id : null;
}

/** Delivery ids are positive int8, shown as text. */
function parseDeliveryId(ref: string): bigint | null {
  if (!/^[1-9][0-9]{0,18}$/.test(ref)) return null;
  const id = BigInt(ref);
  return id <= MAX_INT8 ? id : null;
}

/**
 * The webhook if it exists in this database and the key may see the database. An id that cannot
 * exist, a webhook of another database and a database outside the key's scope are all the same
 * "not found", so a key learns nothing about webhooks it cannot reach.
 */
async function findWebhook(
  client: Pick<Tx, 'webhook'>,
  principal: Principal,
  databaseId: string,
  webhookRef: string,
): Promise<WebhookRow> {
  const missing = () => notFound(`Webhook ${webhookRef} not found`);
  const id = parseWebhookId(webhookRef);
  const database = databaseId.toLowerCase();
  if (id === null || !UUID_PATTERN.test(databaseId) || !canAccessDatabase(principal, database)) {
    throw missing();
  }
  const webhook = await client.webhook.findFirst({ where: { id, databaseId: database } });
  if (!webhook) throw missing();
  return webhook;
}

/** A table filter names a table of this database by id or name; the webhook stores its id. */
async function resolveTableFilter(tx: Tx | PrismaClient, databaseId: string, tableRef: string) {
  try {
    return (await findTableByRef(tx, databaseId, tableRef)).id;
  } catch (error) {
    if (error instanceof DomainError && error.kind === 'not_found') throw noSuchTable(tableRef);
    throw error;
  }
}

const noSuchTable = (tableRef: string) =>
  invalid(['tableId'], `no table ${JSON.stringify(tableRef)} in this database`);

/** The ids of the fields `refs` name (ids or names) in the webhook's table, each once. */
async function resolveFieldFilter(
  client: Tx | PrismaClient,
  tableId: string | null,
  refs: readonly string[],
): Promise<string[]> {
  if (tableId === null) {
    throw invalid(['fieldIds'], 'needs a tableId, the table whose fields they are');
  }
  const fields = await client.field.findMany({ where: { tableId }, select: { id: true, name: true } });
  const byRef = new Map(
    fields.flatMap((field) => [[field.id, field.id] as const, [nameKey(field.name), field.id] as const]),
  );
  const ids = refs.map((ref, index) => {
    const id = byRef.get(ref) ?? byRef.get(nameKey(ref));
    if (id === undefined) {
      throw invalid(
        ['fieldIds', index],
        `unknown field ${JSON.stringify(ref)}${didYouMean(
          ref,
          fields.map((field) => field.name),
        )} in the webhook's table`,
      );
    }
    return id;
  });
  return [...new Set(ids)];
}

/** The id of the view `ref` names (id, else name case aside) in the webhook's table. */
async function resolveViewFilter(
  client: Tx | PrismaClient,
  tableId: string | null,
  ref: string,
): Promise<string> {
  if (tableId === null) throw invalid(['viewId'], 'needs a tableId, the table whose view it is');
  const views = await client.view.findMany({ where: { tableId }, select: { id: true, name: true } });
  const view =
    (VIEW_ID_PATTERN.test(ref) ? views.find((candidate) => candidate.id === ref) : undefined) ??
    views.find((candidate) => nameKey(candidate.name) === nameKey(ref));
  if (!view) {
    throw invalid(
      ['viewId'],
      `unknown view ${JSON.stringify(ref)}${didYouMean(
        ref,
        views.map((candidate) => candidate.name),
      )} in the webhook's table`,
    );
  }
  return view.id;
}

/** A table deleted between resolving the filter and writing the webhook fails its foreign key. */
async function withTableFilter<T>(tableRef: string | null | undefined, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (typeof tableRef === 'string' && databaseErrorOf(error)?.code === '23503') throw noSuchTable(tableRef);
    throw error;
  }
}

/**
 * A webhook sends what its events carry to an address of the key's choosing, so steering one is
 * reading: record events need `records:read`, table and field events `schema:read`, besides
 * `webhooks:manage`. Checked whenever a webhook is created, changed or made to send again.
 * `openEvents`: the types of deliveries still to be sent, when a change would send them to another
 * url or match them against another table; they need the same scopes as the events heard.
 */
function requireScopesToReceive(
  principal: Principal,
  events: readonly string[],
  openEvents: readonly string[] = [],
): void {
  for (const { scope, carries, why } of EVENT_READ_SCOPES) {
    if (events.some(carries)) requireScope(principal, scope, why);
    const open = openEvents.filter(carries);
    if (open.length > 0) {
      requireScope(
        principal,
        scope,
        `the webhook still has ${open.join(', ')} deliveries to send, which would follow the change; ${why}`,
      );
    }
  }
}

/**
 * Types of the webhook's deliveries still open, when `patch` retargets it: a new url receives
 * them, and a new table decides which of them are still sent. A table named differently from its
 * stored id (by name) counts as a change: that only asks for a scope the key may not need.
 */
async function openEventsRetargeted(
  prisma: PrismaClient,
  webhook: WebhookRow,
  patch: UpdateWebhookRequest,
): Promise<string[]> {
  const retargets =
    (patch.url !== undefined && patch.url !== webhook.url) ||
    (patch.tableId !== undefined && patch.tableId !== webhook.tableId);
  if (!retargets) return [];
  const query = openDeliveryEventTypesQuery(webhook.id);
  const rows = await prisma.$queryRawUnsafe<{ event_type: string }[]>(query.text, ...query.values);
  return rows.map((row) => row.event_type);
}

/**
 * Why deliveries would refuse `url`, or null: its host is, or resolves to, an address deliveries
 * refuse (private, loopback, link-local, cloud metadata…) outside the ranges the installation
 * allows. The caller holds the network and the installation's settings.
 */
export type WebhookUrlCheck = (url: string) => Promise<string | null>;

/**
 * A URL deliveries would refuse is refused when registered, not left to fail every delivery. A
 * host that does not resolve yet is taken: each delivery checks the addresses it connects to anyway.
 */
async function requireDeliverableUrl(url: string, refusalOf: WebhookUrlCheck): Promise<void> {
  const refusal = await refusalOf(url);
  if (refusal !== null)
    throw invalid(
      ['url'],
      `${refusal}; deliveries go only to public addresses unless the WEBHOOK_ALLOWED_CIDRS setting lists it`,
    );
}

export async function createWebhook(
  prisma: PrismaClient,
  secretKey: Buffer,
  principal: Principal,
  databaseId: string,
  input: CreateWebhookRequest,
  urlRefusal: WebhookUrlCheck,
  afterViewChange?: () => void,
): Promise<CreatedWebhook> {
  requireScopesToReceive(principal, input.events);
  await requireDeliverableUrl(input.url, urlRefusal);
  const secret = newWebhookSecret();
  const row = await withTableFilter(input.tableId, () =>
    prisma.$transaction(async (tx) => {
      const database = await findAccessibleDatabase(tx, principal, databaseId);
      // Concurrent creates for one database queue here, so the count below cannot be outrun.
      // NO KEY UPDATE leaves the foreign-key checks of other writes to the database unblocked.
      await tx.$queryRaw`SELECT id FROM databases WHERE id = ${database.id}::uuid FOR NO KEY UPDATE`;
      const count = await tx.webhook.count({ where: { databaseId: database.id } });
      if (count >= MAX_WEBHOOKS_PER_DATABASE) {
        throw invalid(null, `a database holds at most ${MAX_WEBHOOKS_PER_DATABASE} webhooks`);
      }
      const tableId =
        input.tableId === undefined ? null : await resolveTableFilter(tx, database.id, input.tableId);
      const fieldIds = input.fieldIds ? await resolveFieldFilter(tx, tableId, input.fieldIds) : [];
      const viewId = input.viewId === undefined ? null : await resolveViewFilter(tx, tableId, input.viewId);
      // Writes learn which views webhooks watch from the table metadata each process keeps.
      if (viewId !== null) await announceMetadataChange(tx, database.id);
      return tx.webhook.create({
        data: {
          databaseId: database.id,
          tableId,
          url: input.url,
          events: input.events,
          fieldIds,
          viewId,
          secretCiphertext: sealWebhookSecret(secretKey, secret),
        },
      });
    }),
  );
  if (row.viewId !== null) afterViewChange?.();
  return { ...toWebhookDto(row), secret };
}

export async function listWebhooks(
  prisma: PrismaClient,
  principal: Principal,
  databaseId: string,
): Promise<Webhook[]> {
  const database = await findAccessibleDatabase(prisma, principal, databaseId);
  const rows = await prisma.webhook.findMany({ where: { databaseId: database.id }, orderBy: { id: 'asc' } });
  return rows.map(toWebhookDto);
}

export async function getWebhook(
  prisma: PrismaClient,
  principal: Principal,
  databaseId: string,
  webhookRef: string,
): Promise<Webhook> {
  return toWebhookDto(await findWebhook(prisma, principal, databaseId, webhookRef));
}

/**
 * The field filter a change leaves (undefined: unchanged). Field ids belong to one table: a
 * webhook that moves to another table (or to every table) keeps no filter of the old one.
 */
async function fieldFilterAfter(
  prisma: PrismaClient,
  webhook: WebhookRow,
  tableId: string | null | undefined,
  refs: readonly string[] | null | undefined,
): Promise<string[] | undefined> {
  const table = tableId === undefined ? webhook.tableId : tableId;
  if (refs === null) return [];
  if (refs !== undefined) return resolveFieldFilter(prisma, table, refs);
  if (table !== webhook.tableId && webhook.fieldIds.length > 0) {
    throw invalid(
      ['fieldIds'],
      "the webhook's fieldIds are fields of its table; give fieldIds (or null) with a new tableId",
    );
  }
  return undefined;
}

/** The view a change leaves (undefined: unchanged); a view belongs to one table, as fields do. */
async function viewFilterAfter(
  client: Tx,
  webhook: WebhookRow,
  tableId: string | null | undefined,
  ref: string | null | undefined,
): Promise<string | null | undefined> {
  const table = tableId === undefined ? webhook.tableId : tableId;
  if (ref === null) return null;
  if (ref !== undefined) return resolveViewFilter(client, table, ref);
  if (table !== webhook.tableId && webhook.viewId !== null) {
    throw invalid(
      ['viewId'],
      "the webhook's viewId is a view of its table; give viewId (or null) with a new tableId",
    );
  }
  return undefined;
}

/** Setting `active` true again also ends the failure streak that may have switched it off. */
export async function updateWebhook(
  prisma: PrismaClient,
  principal: Principal,
  databaseId: string,
  webhookRef: string,
  patch: UpdateWebhookRequest,
  urlRefusal: WebhookUrlCheck,
  afterViewChange?: () => void,
): Promise<Webhook> {
  const webhook = await findWebhook(prisma, principal, databaseId, webhookRef);
  requireScopesToReceive(
    principal,
    patch.events ?? webhook.events,
    await openEventsRetargeted(prisma, webhook, patch),
  );
  if (patch.url !== undefined) await requireDeliverableUrl(patch.url, urlRefusal);
  const tableId =
    typeof patch.tableId === 'string'
      ? await resolveTableFilter(prisma, webhook.databaseId, patch.tableId)
      : patch.tableId;
  const fieldIds = await fieldFilterAfter(prisma, webhook, tableId, patch.fieldIds);
  let viewChanges = false;
  const [updated] = await withTableFilter(patch.tableId, () =>
    prisma.$transaction(async (tx) => {
      // The database's row is held before the view is looked up: a view's deletion takes it too,
      // so it cannot slip in between and leave the webhook naming a view that is gone.
      if (patch.viewId !== undefined) await announceMetadataChange(tx, webhook.databaseId);
      const viewId = await viewFilterAfter(tx, webhook, tableId, patch.viewId);
      viewChanges = viewId !== undefined && viewId !== webhook.viewId;
      return tx.webhook.updateManyAndReturn({
        where: { id: webhook.id, databaseId: webhook.databaseId },
        data: {
          ...(patch.url !== undefined ? { url: patch.url } : {}),
          ...(patch.events !== undefined ? { events: patch.events } : {}),
          ...(tableId !== undefined ? { tableId } : {}),
          ...(fieldIds !== undefined ? { fieldIds } : {}),
          ...(viewId !== undefined ? { viewId } : {}),
          ...(patch.active !== undefined ? { active: patch.active } : {}),
          ...(patch.active === true ? { failingSince: null } : {}),
          updatedAt: new Date(),
        },
      });
    }),
  );
  if (!updated) throw notFound(`Webhook ${webhookRef} not found`);
  if (viewChanges) afterViewChange?.();
  return toWebhookDto(updated);
}

/** Permanent; its deliveries and their attempts go with it. */
export async function deleteWebhook(
  prisma: PrismaClient,
  principal: Principal,
  databaseId: string,
  webhookRef: string,
): Promise<void> {
  const webhook = await findWebhook(prisma, principal, databaseId, webhookRef);
  const result = await prisma.webhook.deleteMany({
    where: { id: webhook.id, databaseId: webhook.databaseId },
  });
  if (result.count === 0) throw notFound(`Webhook ${webhookRef} not found`);
}

interface AttemptRow {
  attempt: number;
  statusCode: number | null;
  durationMs: number;
  errorKind: string | null;
  error: string | null;
  createdAt: Date;
  delivery: { id: bigint; eventId: string; eventType: string };
}

const isSuccess = (row: AttemptRow) =>
  row.statusCode !== null && row.statusCode >= 200 && row.statusCode < 300 && row.errorKind === null;

/** What went wrong, or null for a success; a bare non-2xx answer is an `http_status` error. */
function attemptError(row: AttemptRow): WebhookDeliveryError | null {
  if (row.errorKind !== null || row.error !== null) {
    return { kind: row.errorKind ?? 'error', message: row.error ?? row.errorKind ?? '' };
  }
  if (isSuccess(row)) return null;
  return row.statusCode === null
    ? { kind: 'no_response', message: 'no response was received' }
    : { kind: 'http_status', message: `HTTP ${row.statusCode}` };
}

function toAttemptDto(row: AttemptRow): WebhookDeliveryAttempt {
  return {
    deliveryId: row.delivery.id.toString(),
    eventId: toDeliveredEventId(row.delivery.eventId),
    eventType: row.delivery.eventType as WebhookEventType,
    attempt: row.attempt,
    statusCode: row.statusCode,
    succeeded: isSuccess(row),
    durationMs: row.durationMs,
    error: attemptError(row),
    attemptedAt: row.createdAt.toISOString(),
  };
}

/** The most recent delivery attempts of a webhook, newest first. */
export async function listWebhookDeliveries(
  prisma: PrismaClient,
  principal: Principal,
  databaseId: string,
  webhookRef: string,
  limit: number,
): Promise<WebhookDeliveryAttempt[]> {
  const webhook = await findWebhook(prisma, principal, databaseId, webhookRef);
  const rows = await prisma.webhookDeliveryAttempt.findMany({
    where: { delivery: { webhookId: webhook.id } },
    include: { delivery: { select: { id: true, eventId: true, eventType: true } } },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: limit,
  });
  return rows.map(toAttemptDto);
}

/**
 * Makes a delivery due now and wakes the dispatcher. The NOTIFY is sent on commit only; should it
 * be missed, the dispatcher's sweep of due deliveries picks the delivery up anyway.
 */
export async function retryWebhookDelivery(
  prisma: PrismaClient,
  principal: Principal,
  databaseId: string,
  webhookRef: string,
  deliveryRef: string,
): Promise<RetryWebhookDeliveryResponse> {
  return prisma.$transaction(async (tx) => {
    const webhook = await findWebhook(tx, principal, databaseId, webhookRef);
    const id = parseDeliveryId(deliveryRef);
    const delivery =
      id === null
        ? null
        : await tx.webhookDelivery.findFirst({
            where: { id, webhookId: webhook.id },
            select: { id: true, eventId: true, eventType: true },
          });
    if (!delivery) throw notFound(`Delivery ${deliveryRef} of webhook ${webhookRef} not found`);
    requireScopesToReceive(principal, [delivery.eventType]);
    if (!webhook.active) throw invalid(null, 'Webhook is inactive');
    // The dispatcher would end it unsent anyway; saying so here tells the caller why. A gone event
    // (retention) is left to fail as such.
    const event = await tx.outboxEvent.findUnique({
      where: { id: delivery.eventId },
      select: { tableId: true, changedFieldIds: true, viewMembers: true },
    });
    const unheard =
      event &&
      whyNoLongerHeard(subscriptionOf(webhook), {
        type: delivery.eventType,
        tableId: event.tableId,
        changedFieldIds: event.changedFieldIds,
        viewMembers: event.viewMembers as ViewMembers | null,
      });
    if (unheard) throw invalid(null, `Delivery ${deliveryRef} cannot be retried: ${unheard}`);
    const request = deliveryRetryRequest(delivery.id.toString());
    await tx.$executeRawUnsafe(request.text, ...request.values);
    return { id: delivery.id.toString(), status: 'pending' };
  });
}
