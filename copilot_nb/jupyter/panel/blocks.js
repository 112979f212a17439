// A code block's buttons in the chat panel (markdown.js draws them). Copy copies; Insert asks
// copilot_nb's JupyterLab extension for a cell below the active one (a DOM event: the panel is
// an anywidget outside the extension's bundle); Run asks the kernel, which runs the block
// through the model's own run_code tool and its approval (a card with Approve/Deny where the
// policy asks): the page never runs it. Concatenated before front.js.

const INSERT_EVENT = 'copilot-nb:insert-cell';

/**
 * @param {PanelModel} model
 * @param {MouseEvent} event
 */
function blockAction(model, event) {
  const target = /** @type {Element | null} */ (event.target);
  const button = target?.closest?.('.cnb-codebar button');
  if (!(button instanceof HTMLButtonElement)) {
    return;
  }
  const code =
    button.closest('.cnb-codeblock')?.querySelector('code')?.textContent ?? '';
  if (button.classList.contains('cnb-copy')) {
    copyText(button, code);
  } else if (button.classList.contains('cnb-insert')) {
    document.dispatchEvent(new CustomEvent(INSERT_EVENT, { detail: { code } }));
  } else if (button.classList.contains('cnb-run')) {
    model.send({ kind: 'run', code });
  }
}

/**
 * @param {HTMLButtonElement} button
 * @param {string} code
 */
function copyText(button, code) {
  const copied = () => {
    button.textContent = 'Copied';
    setTimeout(() => (button.textContent = 'Copy'), 1200);
  };
  const fallback = () => {
    // no clipboard permission (a plain-http page): the selection's copy command still works
    const box = document.createElement('textarea');
    box.value = code;
    document.body.append(box);
    box.select();
    if (document.execCommand('copy')) {
      copied();
    }
    box.remove();
  };
  if (navigator.clipboard) {
    navigator.clipboard.writeText(code).then(copied, fallback);
  } else {
    fallback();
  }
}
