import {
  type ApiKeyScope,
  apiKeyScopes,
  type Principal,
  ROOT_KEY_NAME,
  type RouteAccess,
} from '@recordbase/contracts/api-keys';
import { UUID_PATTERN } from '@recordbase/contracts/common';
import { type DomainError, forbidden, notFound } from '@recordbase/contracts/domain-errors';

/**
 * What a key may do: its scopes, and the databases it reaches. Every check of a key's right,
 * the routes' before any work and the use cases' within it, is one of these. A database outside
 * the key's reach is refused as if it did not exist, so a key cannot learn which databases exist
 * outside its scope.
 */

/** `why` completes the message when the need is not obvious from the route. */
export function requireScope(principal: Principal, scope: ApiKeyScope, why?: string): void {
  if (!principal.scopes.has(scope)) {
    throw forbidden(`This API key lacks the "${scope}" scope${why ? `: ${why}` : ''}`);
  }
}

/**
 * What reading each kind of event needs, wherever events are read (webhooks, the change feed):
 * record events carry record values, table and field events the schema.
 */
export const EVENT_READ_SCOPES = [
  {
    scope: 'records:read',
    carries: (event: string) => event.startsWith('record.'),
    why: 'record events carry record values',
  },
  {
    scope: 'schema:read',
    carries: (event: string) => event.startsWith('table.') || event.startsWith('field.'),
    why: 'table and field events carry the schema',
  },
] as const satisfies readonly { scope: ApiKeyScope; carries: (event: string) => boolean; why: string }[];

/** Whether the key may read events of `type`. */
export function canReadEvent(principal: Principal, type: string): boolean {
  return EVENT_READ_SCOPES.every(({ scope, carries }) => !carries(type) || principal.scopes.has(scope));
}

/** The service itself at work on one database (the import worker): every scope, on it alone. */
export function serviceOn(databaseId: string): Principal {
  return {
    keyId: null,
    keyName: ROOT_KEY_NAME,
    scopes: new Set(apiKeyScopes),
    databaseIds: new Set([databaseId]),
  };
}

export function isRoot(principal: Principal): boolean {
  return principal.keyId === null;
}

export function canAccessDatabase(principal: Principal, databaseId: string): boolean {
  return principal.databaseIds === null || principal.databaseIds.has(databaseId);
}

/**
 * The access check of every request that names a database: its id, lower-cased, once the key may
 * use it, decided from the key alone.
 */
export function accessibleDatabaseId(principal: Principal, databaseId: string): string {
  const missing = () => databaseNotFound(databaseId);
  if (!UUID_PATTERN.test(databaseId)) throw missing();
  const id = databaseId.toLowerCase();
  if (!canAccessDatabase(principal, id)) throw missing();
  return id;
}

/** A request's database id may be any text: the message shows at most a bounded piece of it. */
export function databaseNotFound(databaseId: string): DomainError {
  return notFound(`Database ${databaseId.slice(0, 64)} not found`);
}

/**
 * The one check of a key's right to a route, made before any work for the request: the scope (or
 * root) the route needs, and, when the route names a database, that the key may reach it.
 * `unreachable` words the refusal of a database out of reach when the route names something in
 * it (a webhook route answers "webhook not found").
 */
export function authorize(
  principal: Principal,
  access: RouteAccess,
  target: { databaseId?: unknown; unreachable?: () => Error } = {},
): void {
  if ('rootOnly' in access) {
    if (!isRoot(principal)) throw forbidden('Only the root API key can do this');
  } else if ('anyScope' in access) {
    if (!access.anyScope.some((scope) => principal.scopes.has(scope))) {
      throw forbidden(
        `This API key lacks ${access.anyScope.map((scope) => `the "${scope}" scope`).join(' or ')}`,
      );
    }
  } else {
    requireScope(principal, access.scope);
  }
  const { databaseId } = target;
  if (typeof databaseId !== 'string') return;
  if (!UUID_PATTERN.test(databaseId) || !canAccessDatabase(principal, databaseId.toLowerCase())) {
    throw target.unreachable?.() ?? notFound(`Database ${databaseId} not found`);
  }
}
