import { deliveredData, hearsEvent, subscriptionOf, whyNoLongerHeard } from '../src/deliveries/subscription';

/** What a webhook hears of an event, and what a webhook with a view receives of a record event. */

const webhook = (overrides: Partial<Parameters<typeof subscriptionOf>[0]> = {}) =>
  subscriptionOf({ events: ['record.updated'], tableId: 'tblA', fieldIds: null, viewId: null, ...overrides });

const update = {
  type: 'record.updated',
  tableId: 'tblA',
  changedFieldIds: ['fldX'],
  viewMembers: { viwP: { before: ['r1', 'r2'], after: ['r2', 'r3'] } },
};

test('a webhook hears its types, its table and its fields', () => {
  expect(hearsEvent(webhook(), update)).toBe(true);
  expect(whyNoLongerHeard(webhook({ events: ['record.created'] }), update)).toBe(
    'the webhook no longer subscribes to record.updated',
  );
  expect(hearsEvent(webhook({ tableId: 'tblB' }), update)).toBe(false);
  expect(hearsEvent(webhook({ fieldIds: ['fldY'] }), update)).toBe(false);
  expect(hearsEvent(webhook({ fieldIds: ['fldY', 'fldX'] }), update)).toBe(true);
});

test('a webhook with a view hears a record event only when some record was or is inside it', () => {
  expect(hearsEvent(webhook({ viewId: 'viwP' }), update)).toBe(true);
  const outside = { ...update, viewMembers: { viwP: { before: [], after: [] } } };
  expect(whyNoLongerHeard(webhook({ viewId: 'viwP' }), outside)).toBe(
    "none of the event's records was or is in the webhook's view",
  );
  // Members of another view, or none at all (written before the view was watched): not heard.
  expect(hearsEvent(webhook({ viewId: 'viwQ' }), update)).toBe(false);
  expect(hearsEvent(webhook({ viewId: 'viwP' }), { ...update, viewMembers: null })).toBe(false);
  // Table and field events are not filtered by a view.
  const fieldEvent = { type: 'field.updated', tableId: 'tblA', changedFieldIds: [], viewMembers: null };
  expect(hearsEvent(webhook({ events: ['field.updated'], viewId: 'viwP' }), fieldEvent)).toBe(true);
});

test('a webhook with a view receives the records inside it before or after, each with view', () => {
  const data = {
    tableId: 'tblA',
    recordIds: ['r1', 'r2', 'r3', 'r4'],
    records: ['r1', 'r2', 'r3', 'r4'].map((id) => ({ id, data: {}, fields: {} })),
    changes: ['r1', 'r2', 'r3', 'r4'].map((recordId) => ({
      recordId,
      changedFieldIds: ['fldX'],
      previous: {},
    })),
  };
  const through = JSON.parse(deliveredData(JSON.stringify(data), update, 'viwP'));
  expect(through).toEqual({
    tableId: 'tblA',
    recordIds: ['r1', 'r2', 'r3'],
    records: [
      { id: 'r1', data: {}, fields: {}, view: { before: true, after: false } },
      { id: 'r2', data: {}, fields: {}, view: { before: true, after: true } },
      { id: 'r3', data: {}, fields: {}, view: { before: false, after: true } },
    ],
    changes: data.changes.slice(0, 3),
  });
});
