/**
 * Which review records this user's kernel wrote. A notebook is a file anyone can send, and a
 * crafted record must not be offered as the agent's change: the kernel signs each record with
 * the user's key, which the page cannot hold, so the page asks the kernel over the live comm
 * (`{event: 'review_verify', id, records}`, answered by `{event: 'review_verified', id, ok}`)
 * and offers only what it vouched for. With no kernel attached, nothing new is offered; an
 * answer is remembered for the record as it is, so a record changed since is asked about again.
 */
import { JSONObject } from './changes';

/** One record to vouch for: a cell's (with the cell's id), a deleted cell's, a file's. */
export type Item =
  | { kind: 'cell'; cell_id: string; record: JSONObject }
  | { kind: 'deleted' | 'file'; record: JSONObject };

export class Vouchers {
  constructor(
    private readonly send: (data: JSONObject) => boolean,
    private readonly changed: () => void
  ) {}

  /** Whether the kernel vouched for this record; until it answers, no (and it is asked once). */
  vouched(item: Item): boolean {
    const key = JSON.stringify(item);
    const known = this.known.get(key);
    if (known !== undefined) {
      return known;
    }
    if (!this.waiting.has(key)) {
      this.waiting.set(key, item);
      this.schedule();
    }
    return false;
  }

  /** The comm is attached (ask what waits) or gone (what it was asked is asked again later). */
  set attached(value: boolean) {
    this.isAttached = value;
    if (value) {
      this.schedule();
    } else {
      this.asked.clear();
    }
  }

  /** The kernel's `review_verified` answer: remember each record's, and draw again if any is ours. */
  answer(data: JSONObject): void {
    const keys = this.asked.get(data.id);
    this.asked.delete(data.id);
    if (!keys) {
      return;
    }
    const ok: unknown[] = Array.isArray(data.ok) ? data.ok : [];
    keys.forEach((key, i) => {
      this.known.set(key, ok[i] === true);
      this.waiting.delete(key);
    });
    if (ok.some(value => value === true)) {
      this.changed();
    }
  }

  /** Ask once per microtask, for every record met meanwhile (a notebook's records in one go). */
  private schedule(): void {
    if (this.scheduled) {
      return;
    }
    this.scheduled = true;
    queueMicrotask(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    if (!this.isAttached) {
      return;
    }
    const inFlight = new Set([...this.asked.values()].flat());
    const keys = [...this.waiting.keys()].filter(key => !inFlight.has(key));
    if (!keys.length) {
      return;
    }
    const id = this.next++;
    const records = keys.map(key => this.waiting.get(key));
    if (this.send({ event: 'review_verify', id, records })) {
      this.asked.set(id, keys);
    }
  }

  private readonly known = new Map<string, boolean>();
  private readonly waiting = new Map<string, Item>();
  private readonly asked = new Map<number, string[]>();
  private next = 1;
  private scheduled = false;
  private isAttached = false;
}
