/**
 * Work on a notebook view's rendered outputs as they appear: a mutation that concerns them asks
 * for one pass in the next animation frame (many mutations, one pass), and a pass runs once at
 * the start. Code blocks' bars (`codeBlocks.ts`) and Fix with Copilot's buttons (`fixError.ts`)
 * are drawn this way.
 */
import { NotebookPanel } from '@jupyterlab/notebook';

export class OutputWatch {
  /** Call `pass` now and after mutations `relevant` accepts, until the view is disposed. */
  constructor(
    panel: NotebookPanel,
    relevant: (mutation: MutationRecord) => boolean,
    private readonly pass: () => void
  ) {
    this.observer = new MutationObserver(mutations => {
      if (!this.frame && mutations.some(relevant)) {
        this.frame = requestAnimationFrame(() => this.run());
      }
    });
    this.observer.observe(panel.content.node, {
      childList: true,
      subtree: true
    });
    panel.disposed.connect(() => this.dispose());
    this.run();
  }

  dispose(): void {
    this.observer.disconnect();
    if (this.frame) {
      cancelAnimationFrame(this.frame);
    }
  }

  private run(): void {
    this.frame = 0;
    this.pass();
  }

  private readonly observer: MutationObserver;
  private frame = 0;
}
