/**
 * Work on a notebook view's rendered outputs as they appear: a mutation in an output area, or one
 * that adds nodes holding what the watcher looks for, asks for one pass in the next animation
 * frame (many mutations, one pass), and a pass runs once at the start. Code blocks' bars (`codeBlocks.ts`) and Fix with Copilot's buttons (`fixError.ts`)
 * are drawn this way.
 */
import { NotebookPanel } from '@jupyterlab/notebook';

export class OutputWatch {
  /** Call `pass` now and after mutations that may concern `selector`, until the view is
   * disposed. */
  constructor(
    panel: NotebookPanel,
    selector: string,
    private readonly pass: () => void
  ) {
    this.observer = new MutationObserver(mutations => {
      if (!this.frame && mutations.some(m => mayConcern(m, selector))) {
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

/** Whether a change may concern `selector`: in an output area, or nodes that hold a match. */
function mayConcern(mutation: MutationRecord, selector: string): boolean {
  const target = mutation.target;
  const element = target instanceof Element ? target : target.parentElement;
  if (element?.closest('.jp-OutputArea')) {
    return true;
  }
  return Array.from(mutation.addedNodes).some(
    node =>
      node instanceof Element &&
      (node.matches(selector) || node.querySelector(selector) !== null)
  );
}
