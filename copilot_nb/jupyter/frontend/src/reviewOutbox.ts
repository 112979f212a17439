/**
 * What the review tells the kernel: the user's decisions, queued until a comm is attached, so
 * Keep and Undo work while the kernel restarts. Outcomes decided in one task (Keep all) go as
 * one `{event: 'review', outcomes}`; a file's Keep or Undo goes as `{event: 'review_file', id,
 * ...}`, and the kernel's answer comes back with that id (`review_file_result`).
 */
import { JSONObject } from './changes';
import { IFileReview, IOutcome } from './reviewRecords';

export class ReviewOutbox {
  constructor(private readonly send: (data: JSONObject) => boolean) {}

  /** One outcome for the kernel's review ledger (sent with the others of this task). */
  report(outcome: IOutcome): void {
    if (!outcome.why) {
      delete outcome.why;
    }
    this.outcomes.push(outcome);
    queueMicrotask(() => {
      if (this.outcomes.length) {
        this.queue.push({ event: 'review', outcomes: this.outcomes.splice(0) });
        this.flush();
      }
    });
  }

  /** Ask the kernel to keep a file's change or restore it from its checkpoint. */
  decideFile(file: IFileReview, outcome: 'keep' | 'undo'): void {
    const id = this.nextFileRequest++;
    this.fileRequests.set(id, file);
    this.queue.push({
      event: 'review_file',
      id,
      turn: file.turn,
      path: file.path,
      outcome
    });
    this.flush();
  }

  /** The file a `review_file_result` answers, once (undefined for an unknown or repeated id). */
  answered(id: unknown): IFileReview | undefined {
    const file = this.fileRequests.get(id as number);
    this.fileRequests.delete(id as number);
    return file;
  }

  /** The comm is attached (again): send what waited. */
  set attached(value: boolean) {
    this.isAttached = value;
    if (value) {
      this.flush();
    }
  }

  get attached(): boolean {
    return this.isAttached;
  }

  private flush(): void {
    while (this.isAttached && this.queue.length) {
      if (!this.send(this.queue[0])) {
        return;
      }
      this.queue.shift();
    }
  }

  private readonly outcomes: IOutcome[] = [];
  private readonly queue: JSONObject[] = [];
  private readonly fileRequests = new Map<number, IFileReview>();
  private nextFileRequest = 1;
  private isAttached = false;
}
