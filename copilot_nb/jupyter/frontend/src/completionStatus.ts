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
          ? `copilot: ${message}`
          : '';
    this.node.title =
      kind === 'error'
        ? 'copilot_nb could not complete here; the kernel said why. Settings: copilot_nb completions.'
        : kind === 'waiting'
          ? 'A cell is running, and this kernel handles completions only between cells.'
          : '';
  }
}
