// The chat panel's front end (an anywidget ES module, no build step, no network). The kernel
// sends small ops ({ops: [[kind, ...args]]}); this view keeps the transcript and renders answers
// with `markdown()` and `diffHtml()` from markdown.js, which is concatenated before it.

// --- the view ----------------------------------------------------------------------------

const el = (tag, cls, text) => {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
};
const fmt = (n) => (n < 1000 ? String(n) : n < 1e6 ? `${(n / 1e3).toFixed(1)}k` : `${(n / 1e6).toFixed(1)}M`);
const ASK = { edit: "change files", execute: "run code", read: "read", "read-secret": "read a secret (a credential file or a masked variable)" };
const FOLD_LINES = 40;
const FOLD_CHARS = 3000;
const EMPTY = [
  "Ask about your notebook, files or data.",
  "Enter sends, Shift+Enter starts a new line. The conversation is shared with %%copilot cells.",
];

function render({ model, el: root }) {
  const view = Math.random().toString(36).slice(2);
  root.classList.add("cnb-root");
  root.setAttribute("data-lm-suppress-shortcuts", "true");
  root.replaceChildren();

  const header = el("div", "cnb-header");
  const title = el("div", "cnb-title", model.get("title"));
  const fresh = el("button", "cnb-new", "New chat");
  fresh.type = "button";
  fresh.title = "Forget the conversation and start a new one";
  header.append(title, fresh);

  const log = el("div", "cnb-log");
  log.setAttribute("role", "log");
  const empty = el("div", "cnb-empty");
  empty.append(el("p", "cnb-empty-lead", EMPTY[0]), el("p", "", EMPTY[1]));
  const working = el("div", "cnb-working");
  working.append(el("span"), el("span"), el("span"));

  const footer = el("div", "cnb-footer");
  const input = el("textarea", "cnb-input");
  input.rows = 1;
  input.placeholder = "Ask Copilot…";
  input.title = "Enter sends, Shift+Enter starts a new line";
  const send = el("button", "cnb-send", "Send");
  const stop = el("button", "cnb-stop", "Stop");
  send.type = stop.type = "button";
  const row = el("div", "cnb-inputrow");
  row.append(input, send, stop);
  const status = el("div", "cnb-status");
  const picker = el("select", "cnb-model");
  picker.title = "Model for the next request";
  const meter = el("span", "cnb-meter");
  const bar = el("span", "cnb-bar");
  const fill = el("span", "cnb-fill");
  bar.append(fill);
  status.append(picker, meter, bar);
  footer.append(row, status);
  root.append(header, log, footer);

  let synced = false;
  let text = null; // the answer block being streamed: {node, raw}
  let thought = null;
  const cards = new Map();
  let lastCard = null;
  const dirty = new Set();
  let frame = 0;

  const nearBottom = () => log.scrollHeight - log.scrollTop - log.clientHeight < 48;
  const add = (node) => {
    log.insertBefore(node, working);
    empty.remove();
    return node;
  };
  const paint = () => {
    frame = 0;
    const stick = nearBottom();
    for (const block of dirty) block.node.innerHTML = markdown(block.raw);
    dirty.clear();
    if (stick) log.scrollTop = log.scrollHeight;
  };
  const schedule = () => {
    if (!frame) frame = requestAnimationFrame(paint);
  };
  const clear = () => {
    log.replaceChildren(empty, working);
    text = thought = lastCard = null;
    cards.clear();
    dirty.clear();
  };

  function card(id, name, target, kind, preview) {
    const box = el("div", "cnb-tool");
    box.dataset.state = "running";
    const details = el("details");
    const head = el("summary", "cnb-tool-head");
    head.append(el("span", "cnb-icon"), el("span", "cnb-tool-name", name));
    if (target) head.append(el("span", "cnb-tool-target", target));
    const outcome = el("span", "cnb-tool-outcome");
    head.append(outcome);
    const body = el("div", "cnb-tool-body");
    const args = el("pre", "cnb-args");
    if (kind === "diff") args.innerHTML = diffHtml(preview);
    else args.textContent = preview;
    const label = { diff: "Change", code: "Content" }[kind] || "Arguments";
    if (preview) body.append(el("div", "cnb-label", label), args);
    const lines = preview ? preview.split("\n").length : 0;
    if (lines > FOLD_LINES || (preview && preview.length > FOLD_CHARS)) {
      // all of it is here: folded to a few lines, a click shows everything (nothing is cut)
      args.classList.add("cnb-folded");
      const more = el("button", "cnb-more", `Show all ${lines.toLocaleString()} lines (${preview.length.toLocaleString()} characters)`);
      more.type = "button";
      more.onclick = () => {
        const folded = args.classList.toggle("cnb-folded");
        args.classList.toggle("cnb-unfolded", !folded);
        more.textContent = folded ? `Show all ${lines.toLocaleString()} lines` : "Fold";
      };
      body.append(more);
    }
    details.append(head, body);
    box.append(details);
    const entry = { box, details, body, args, outcome, approve: null, diffed: false };
    cards.set(id, entry);
    lastCard = entry;
    return entry;
  }

  function ask(entry, id, category, warning) {
    entry.box.dataset.state = "asking";
    entry.details.open = true;
    const bar = el("div", "cnb-approve");
    const yes = el("button", "cnb-approve-btn", "Approve");
    const no = el("button", "cnb-deny-btn", "Deny");
    yes.type = no.type = "button";
    const answer = (kind) => {
      yes.disabled = no.disabled = true;
      model.send({ kind, id });
    };
    yes.onclick = () => answer("approve");
    no.onclick = () => answer("deny");
    bar.append(el("span", "cnb-approve-q", `Allow ${entry.box.querySelector(".cnb-tool-name").textContent} to ${ASK[category] || "run"}?`), yes, no);
    if (warning) bar.append(el("div", "cnb-approve-warn", `⚠ ${warning}`));
    entry.box.append(bar);
    entry.approve = bar;
  }

  function apply(op) {
    const [kind, ...a] = op;
    if (kind !== "t") text = null;
    if (kind !== "r") thought = null;
    if (kind === "t") {
      if (!text) text = { node: add(el("div", "cnb-answer")), raw: "" };
      text.raw += a[0];
      dirty.add(text);
    } else if (kind === "r") {
      if (!thought) {
        const box = add(el("details", "cnb-thinking"));
        box.append(el("summary", "", "Thinking"));
        thought = { body: box.appendChild(el("div", "cnb-thinking-body")) };
      }
      thought.body.textContent += a[0];
    } else if (kind === "u") {
      add(el("div", "cnb-user", a[0]));
    } else if (kind === "tool") {
      add(card(a[0], a[1], a[2], a[3], a[4]).box);
    } else if (kind === "ask") {
      const entry = cards.get(a[0]);
      if (entry) ask(entry, a[0], a[1], a[2]);
    } else if (kind === "asked") {
      const entry = cards.get(a[0]);
      if (entry) {
        entry.approve?.remove();
        entry.approve = null;
        entry.box.dataset.state = a[1] ? "running" : "error";
        entry.outcome.textContent = a[1] ? "approved" : "denied";
      }
    } else if (kind === "diff") {
      if (lastCard) {
        const { body, args } = lastCard;
        args.innerHTML = diffHtml(a[1]);
        if (args.parentNode === body) args.previousElementSibling?.remove();
        else body.prepend(args);
        const label = el("div", "cnb-label", "Diff ");
        label.append(el("span", "cnb-path", a[0]));
        body.insertBefore(label, args);
        lastCard.diffed = true;
      }
    } else if (kind === "done") {
      const entry = cards.get(a[0]);
      if (entry) {
        entry.box.dataset.state = a[1] ? "ok" : "error";
        entry.outcome.textContent = a[2];
        // an edit's result repeats its diff: show it only when the call failed
        if (a[3] && !(a[1] && entry.diffed)) {
          entry.body.append(el("div", "cnb-label", "Result"), el("pre", "cnb-result", a[3]));
        }
      }
    } else if (kind === "note") {
      const note = add(el("div", "cnb-note"));
      note.innerHTML = markdown(a[0]);
    } else if (kind === "err") {
      const box = add(el("div", "cnb-error"));
      box.append(el("div", "cnb-error-msg", a[0]));
      if (a[1]) {
        const more = el("details");
        more.append(el("summary", "", "Details"), el("pre", "", a[1]));
        box.append(more);
      }
    } else if (kind === "end") {
      for (const entry of cards.values()) {
        entry.approve?.remove();
        entry.approve = null;
        if (entry.box.dataset.state === "running" || entry.box.dataset.state === "asking") {
          entry.box.dataset.state = "stopped";
          entry.outcome.textContent ||= "cancelled";
        }
      }
      if (a[0] === "stopped") add(el("div", "cnb-stopped", "Stopped"));
    } else if (kind === "clear") {
      clear();
    }
  }

  const onMessage = (msg) => {
    if (msg.replay !== undefined) {
      if (msg.replay !== view) return;
      clear();
      msg.ops.forEach(apply);
      synced = true;
      paint();
      log.scrollTop = log.scrollHeight;
    } else if (synced && msg.ops) {
      const stick = nearBottom();
      msg.ops.forEach(apply);
      if (stick) log.scrollTop = log.scrollHeight;
      schedule();
    }
  };

  const submit = () => {
    const prompt = input.value.trim();
    if (!prompt || model.get("busy")) return;
    model.send({ kind: "prompt", text: prompt });
    input.value = "";
    grow();
  };
  const grow = () => {
    input.style.height = "auto";
    input.style.height = `${Math.min(input.scrollHeight, 180)}px`;
  };
  const onKey = (event) => {
    event.stopPropagation(); // keys typed here are not notebook shortcuts
    if (event.target === input && event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      submit();
    }
  };
  const onClick = (event) => {
    const copy = event.target.closest?.(".cnb-copy");
    if (copy) {
      const code = copy.closest(".cnb-codeblock").querySelector("code").textContent;
      navigator.clipboard?.writeText(code).then(() => {
        copy.textContent = "Copied";
        setTimeout(() => (copy.textContent = "Copy"), 1200);
      });
    }
  };
  const models = () => {
    picker.replaceChildren(...model.get("models").map((m) => el("option", "", m)));
    picker.value = model.get("model");
  };
  const busy = () => {
    const on = model.get("busy");
    root.classList.toggle("cnb-busy", on);
    send.hidden = on;
    stop.hidden = !on;
    if (!on) stop.disabled = false;
  };
  const usage = () => {
    const [inTok, outTok, ctx, budget] = ["tokens_in", "tokens_out", "context", "budget"].map((k) => model.get(k));
    meter.textContent = inTok || outTok ? `${fmt(inTok)} in · ${fmt(outTok)} out` : "";
    meter.title = `${inTok.toLocaleString()} input and ${outTok.toLocaleString()} output tokens in this chat`;
    bar.hidden = !budget;
    if (budget) {
      const share = Math.min(1, ctx / budget);
      fill.style.width = `${(share * 100).toFixed(1)}%`;
      bar.classList.toggle("cnb-warn", share > 0.8);
      bar.title = `context: ${ctx.toLocaleString()} of ${budget.toLocaleString()} tokens`;
    }
  };

  root.addEventListener("keydown", onKey);
  root.addEventListener("keyup", (e) => e.stopPropagation());
  root.addEventListener("keypress", (e) => e.stopPropagation());
  root.addEventListener("click", onClick);
  input.addEventListener("input", grow);
  send.onclick = submit;
  stop.onclick = () => {
    stop.disabled = true;
    model.send({ kind: "stop" });
  };
  fresh.onclick = () => model.send({ kind: "new" });
  picker.onchange = () => {
    model.set("model", picker.value);
    model.save_changes();
  };
  const watched = {
    "msg:custom": onMessage,
    "change:models": models,
    "change:model": models,
    "change:busy": busy,
    "change:title": () => (title.textContent = model.get("title")),
    "change:tokens_in": usage,
    "change:tokens_out": usage,
    "change:context": usage,
    "change:budget": usage,
  };
  for (const [name, fn] of Object.entries(watched)) model.on(name, fn);
  clear();
  models();
  busy();
  usage();
  model.send({ kind: "ready", view });
  return () => {
    for (const [name, fn] of Object.entries(watched)) model.off(name, fn);
    if (frame) cancelAnimationFrame(frame);
  };
}

export default { render };
