/**
 * What the status bar says about completions while you type: nothing while they work, "waits
 * for the kernel" while a running cell holds them up, and the kernel's short error message
 * (no model configured, the provider refused) instead of ghost text. One for the page: the
 * user types in one notebook at a time, and the latest word wins.
 */
import { ISignal, Signal } from '@lumino/signaling';
import { Widget } from '@lumino/widgets';

export type StatusKind = 'idle' | 'waiting' | 'error';

export const WAITING_TEXT = 'copilot: completions wait for the kernel';
/** Characters the item takes at most: JupyterLab's own status bar items keep their room. */
export const MAX_STATUS = 40;

/** A kernel's message as the status bar shows it: its first clause, cut at a word to fit
 * `MAX_STATUS` with the `copilot: ` prefix (the whole message is the item's tooltip). */
export function shortStatus(message: string): string {
  const prefix = 'copilot: ';
  const clause = message.split(/[:;(\n]|\.\s/)[0].trim() || message.trim();
  const room = MAX_STATUS - prefix.length;
  if (clause.length <= room) {
    return prefix + clause;
  }
  const cut = clause.slice(0, room - 1);
  const word = cut.lastIndexOf(' ');
  return prefix + (word > room / 2 ? cut.slice(0, word) : cut) + '…';
}

/** The state the status bar item shows; the live channel owns it (`ICopilotLive`), channels
 * and the provider set it. */
export class CompletionStatus {
  get kind(): StatusKind {
    return this._kind;
  }

  get message(): string {
    return this._message;
  }

  /** Emitted when the kind or the message changes. */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  set(kind: StatusKind, message: string = ''): void {
    if (kind === this._kind && message === this._message) {
      return;
    }
    this._kind = kind;
    this._message = message;
    this._changed.emit(undefined);
  }

  private _kind: StatusKind = 'idle';
  private _message = '';
  private readonly _changed = new Signal<this, void>(this);
}

/** The status bar item: text only (an error comes from the kernel: it is data, never markup). */
export class CompletionStatusItem extends Widget {
  constructor(private readonly status: CompletionStatus) {
    super();
    this.addClass('cnb-CompletionStatus');
    this.node.style.padding = '0 6px';
    this.node.style.lineHeight = 'var(--jp-statusbar-height, 24px)';
    status.changed.connect(() => this.render(), this);
    this.render();
  }

  private render(): void {
    const { kind, message } = this.status;
    this.node.dataset.kind = kind;
    this.node.textContent =
      kind === 'waiting'
        ? WAITING_TEXT
        : kind === 'error'
          ? shortStatus(message)
          : '';
    this.node.title =
      kind === 'error'
        ? `copilot_nb could not complete here: ${message}\n(Settings: copilot_nb completions.)`
        : kind === 'waiting'
          ? 'A cell is running, and this kernel handles completions only between cells.'
          : '';
  }
}
