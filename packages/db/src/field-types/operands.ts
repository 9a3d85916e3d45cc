import { UUID_PATTERN } from '@recordbase/contracts/common';
import { type DateTimeOperand, parseDateTimeOperand } from './dates';
import type { ConditionContext } from './types';

/** Filter operands checked for the shape an operator's SQL needs; a wrong one is the caller's 400. */

export function needString(ctx: ConditionContext, what: string): string {
  if (typeof ctx.operand !== 'string') throw ctx.needs(what);
  return ctx.operand;
}

export function needStringList(ctx: ConditionContext, what: string): string[] {
  const { operand } = ctx;
  if (!Array.isArray(operand) || !operand.every((item) => typeof item === 'string')) throw ctx.needs(what);
  return operand;
}

export function needNumber(ctx: ConditionContext): number {
  if (typeof ctx.operand !== 'number' || !Number.isFinite(ctx.operand)) throw ctx.needs('a number');
  return ctx.operand;
}

export function needNumberList(ctx: ConditionContext): number[] {
  const { operand } = ctx;
  if (
    !Array.isArray(operand) ||
    !operand.every((item) => typeof item === 'number' && Number.isFinite(item))
  ) {
    throw ctx.needs('an array of numbers');
  }
  return operand;
}

export function needBoolean(ctx: ConditionContext): boolean {
  if (typeof ctx.operand !== 'boolean') throw ctx.needs('true or false');
  return ctx.operand;
}

/** A date field's operand: a day, or a date-time reduced to its UTC day. */
export function needDay(ctx: ConditionContext): string {
  const parsed = typeof ctx.operand === 'string' ? parseDateTimeOperand(ctx.operand) : null;
  if (!parsed) throw ctx.needs('a valid date (YYYY-MM-DD) or ISO 8601 date-time');
  return parsed.kind === 'day' ? parsed.day : parsed.utc.slice(0, 10);
}

export function needDateTimeOrDay(ctx: ConditionContext): DateTimeOperand {
  const parsed = typeof ctx.operand === 'string' ? parseDateTimeOperand(ctx.operand) : null;
  if (!parsed) {
    throw ctx.needs(
      'a valid ISO 8601 date-time with a time zone (such as 2024-05-01T12:00:00Z) or a date (YYYY-MM-DD)',
    );
  }
  return parsed;
}

export function needUuid(ctx: ConditionContext): string {
  if (typeof ctx.operand !== 'string' || !UUID_PATTERN.test(ctx.operand))
    throw ctx.needs('a record id (UUID)');
  return ctx.operand;
}

export function needUuidList(ctx: ConditionContext): string[] {
  const { operand } = ctx;
  if (
    !Array.isArray(operand) ||
    !operand.every((item) => typeof item === 'string' && UUID_PATTERN.test(item))
  ) {
    throw ctx.needs('an array of record ids (UUIDs)');
  }
  return operand;
}
