/**
 * The notebook-level review lists: the cells the agent deleted (`copilot_nb.review_deleted`)
 * and the files it changed (`copilot_nb.review_files`), as the notebook's metadata holds them
 * (what a write builds on) and as offered (what this user's kernel vouched for). Every write is
 * read back at once: inside a transaction the change is announced only when it ends, and a
 * second record in the same transaction must build on the first.
 */
import { JSONObject } from './changes';
import {
  deletedOf,
  fileKey,
  filesOf,
  IDeletedReview,
  IFileReview,
  KEY
} from './reviewRecords';
import { Vouchers } from './reviewProof';
import { ISharedNotebook, metadataObject } from './sharedCells';

export class ReviewLists {
  constructor(
    private readonly shared: () => ISharedNotebook,
    private readonly vouchers: Vouchers
  ) {}

  /** The deleted cells and files offered for review (vouched for by the kernel). */
  deleted: IDeletedReview[] = [];
  files: IFileReview[] = [];

  /** Read the lists from the notebook's metadata again. */
  read(): void {
    this.readFrom(metadataObject(this.shared(), KEY));
  }

  /** Part of a kernel's `delete` change: the deleted cell's record, in the same transaction. */
  recordDeleted(review: JSONObject, index: number, cell: JSONObject): void {
    const entry: IDeletedReview = {
      turn: String(review.turn ?? ''),
      before: (review.before as JSONObject) ?? cell,
      after_id: (review.after_id as string) ?? null,
      index
    };
    if (typeof review.sig === 'string') {
      entry.sig = review.sig;
    }
    this.write('review_deleted', [...this.allDeleted, entry]);
  }

  /** A deleted cell's entry gone (kept, or put back): with any copy of it from the same turn. */
  dropDeleted(entry: IDeletedReview): void {
    const id = entry.before.id;
    this.write(
      'review_deleted',
      this.allDeleted.filter(
        e => e !== entry && !(e.turn === entry.turn && e.before.id === id)
      )
    );
  }

  /** The kernel's `review_files` request: list these files (same turn and path once). */
  addFiles(files: JSONObject[]): JSONObject {
    files = (files ?? []).filter(f => f && typeof f.path === 'string');
    const given: IFileReview[] = files.map(f => ({
      turn: String(f.turn ?? ''),
      path: f.path as string,
      diff: String(f.diff ?? ''),
      kind: String(f.kind ?? 'edit')
    }));
    given.forEach((f: IFileReview, i) => {
      if (typeof files[i].sig === 'string') {
        f.sig = files[i].sig;
      }
    });
    const keys = new Set(given.map(fileKey));
    const kept = this.allFiles.filter(f => !keys.has(fileKey(f)));
    this.write('review_files', [...kept, ...given]);
    return { files: kept.length + given.length };
  }

  /** A file's entry gone (kept, or undone by the kernel). */
  dropFile(file: IFileReview): void {
    const key = fileKey(file);
    this.write(
      'review_files',
      this.allFiles.filter(f => fileKey(f) !== key)
    );
  }

  /** The notebook's lists as written (`all…`), and what of them is offered (vouched for). */
  private readFrom(meta: JSONObject): void {
    this.allDeleted = deletedOf(meta);
    this.allFiles = filesOf(meta);
    this.deleted = this.allDeleted.filter(e =>
      this.vouchers.vouched({ kind: 'deleted', record: e })
    );
    this.files = this.allFiles.filter(f =>
      this.vouchers.vouched({ kind: 'file', record: f })
    );
  }

  /** Set (or drop, when empty) one list of the notebook's `copilot_nb` metadata. */
  private write(name: string, value: unknown[]): void {
    const shared = this.shared();
    const meta: JSONObject = { ...metadataObject(shared, KEY) };
    if (value.length) {
      meta[name] = value;
    } else {
      delete meta[name];
    }
    if (Object.keys(meta).length) {
      shared.setMetadata(KEY, meta);
    } else {
      shared.deleteMetadata(KEY);
    }
    this.readFrom(meta); // read back at once (see the module's note)
  }

  private allDeleted: IDeletedReview[] = [];
  private allFiles: IFileReview[] = [];
}
