import { busy, forbidden, invalid, notFound, tooMany } from '@recordbase/contracts/domain-errors';
import express from 'express';
import supertest from 'supertest';
import { z } from 'zod';
import { createEndpoint, errorMiddleware } from '../src/http';
import { createLogger } from '../src/logger';

/**
 * The one mapping of the domain's refusals to HTTP: the status from the kind, each place named from
 * the part of the request the use case's input came from, and Retry-After when it says when.
 */

const logger = createLogger('domain-errors-test', 'silent');
const authorized: string[] = [];
const endpoint = createEndpoint((principal, access) => {
  authorized.push(JSON.stringify(access));
  if (principal.keyId === 'outsider') throw forbidden('This API key lacks the "records:read" scope');
});

function app() {
  const server = express();
  server.use((req, res, next) => {
    res.locals.principal = {
      keyId: req.headers['x-key'] ?? 'member',
      keyName: 'member',
      scopes: new Set(['records:read']),
      databaseIds: null,
    };
    next();
  });
  const read = { scope: 'records:read' } as const;
  server.get(
    '/listing',
    endpoint({ access: read, query: z.strictObject({ fields: z.string().optional() }) }, async () => {
      throw invalid(['fields', 0], 'unknown field "Nmae"');
    }),
  );
  server.post(
    '/records',
    endpoint({ access: read, body: z.object({ records: z.array(z.unknown()) }) }, async () => {
      throw invalid(['records', 2], (at) => `has the same matchOn values as ${at(['records', 0])}`);
    }),
  );
  server.get(
    '/busy',
    endpoint({ access: read }, async () => {
      throw busy('The table is being changed; retry shortly', 1);
    }),
  );
  server.get(
    '/crowded',
    endpoint({ access: read }, async () => {
      throw tooMany('This API key has 3 imports queued or running', 5);
    }),
  );
  server.get('/before-any-endpoint', () => {
    throw notFound('Database 1234 not found');
  });
  server.use(errorMiddleware(logger));
  return supertest(server);
}

it("names a route's places from its query when it takes no body", async () => {
  const answer = await app().get('/listing').expect(400);
  expect(answer.body.error).toEqual({
    code: 'BAD_REQUEST',
    message: 'query.fields[0]: unknown field "Nmae"',
  });
});

it("names a route's places, and those its words refer to, from its body", async () => {
  const answer = await app()
    .post('/records')
    .send({ records: [1, 2, 3] })
    .expect(400);
  expect(answer.body.error.message).toBe('body.records[2]: has the same matchOn values as body.records[0]');
});

it('answers 503 or 429 with Retry-After when the refusal says when to come back', async () => {
  const busyAnswer = await app().get('/busy').expect(503);
  expect([busyAnswer.body.error.code, busyAnswer.headers['retry-after']]).toEqual([
    'SERVICE_UNAVAILABLE',
    '1',
  ]);
  const crowded = await app().get('/crowded').expect(429);
  expect([crowded.body.error.code, crowded.headers['retry-after']]).toEqual(['RATE_LIMITED', '5']);
});

it('answers a refusal thrown outside any endpoint through the error middleware', async () => {
  const answer = await app().get('/before-any-endpoint').expect(404);
  expect(answer.body.error).toEqual({ code: 'NOT_FOUND', message: 'Database 1234 not found' });
});

it('checks the key with the policy it was given before reading the body', async () => {
  authorized.length = 0;
  const answer = await app()
    .post('/records')
    .set('x-key', 'outsider')
    .set('content-type', 'application/json')
    .send('{ not json')
    .expect(403);
  expect(answer.body.error).toEqual({
    code: 'FORBIDDEN',
    message: 'This API key lacks the "records:read" scope',
  });
  expect(authorized).toEqual(['{"scope":"records:read"}']);
});
