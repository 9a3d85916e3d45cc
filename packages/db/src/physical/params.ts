/** Collects the parameters of one SQL statement and hands out their placeholders ($1, $2, …). */
export class SqlParams {
  readonly values: unknown[] = [];

  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}
