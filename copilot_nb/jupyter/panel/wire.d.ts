// The chat panel's messages both ways, for the page's JavaScript: the same definitions as
// wire.py, field for field (tests/test_panel_wire.py compares the two). The panel's .js files name
// these types in JSDoc comments, and `npm run lint:check` (frontend/) has TypeScript check them
// (tsconfig.panel.json), so a message the page sends or reads is one declared here. Global
// declarations, as the scripts that use them are one scope (widget.py joins them into one module).
// Types only: nothing of this file runs.

// --- ops: what the transcript shows, one change each (feed.py) --------------------------------

type UserOp = { op: 'user'; text: string };
type TextOp = { op: 'text'; text: string };
type ReasoningOp = { op: 'reasoning'; text: string };
type ToolOp = {
  op: 'tool';
  id: string;
  name: string;
  target: string;
  format: string;
  preview: string;
};
type AskOp = {
  op: 'ask';
  id: string;
  category: string;
  warning: string;
  format?: string;
  preview?: string;
  target?: string;
};
type QuestionOp = {
  op: 'question';
  id: string;
  question: string;
  options: string[];
};
type AskedOp = {
  op: 'asked';
  id: string;
  approved: boolean;
  outcome?: string;
  state?: string;
};
type DiffOp = { op: 'diff'; path: string; diff: string };
type DoneOp = {
  op: 'done';
  id: string;
  ok: boolean;
  summary: string;
  result: string;
  output?: string;
};
type UndoableOp = { op: 'undoable'; id: string; note: string };
type UndoneOp = { op: 'undone'; id: string; ok: boolean; text: string };
type NoteOp = { op: 'note'; text: string };
type RetryOp = { op: 'retry'; text: string };
type ErrorOp = { op: 'error'; message: string; detail: string };
type EndOp = { op: 'end'; status: string };
type ClearOp = { op: 'clear' };

type Op =
  | UserOp
  | TextOp
  | ReasoningOp
  | ToolOp
  | AskOp
  | QuestionOp
  | AskedOp
  | DiffOp
  | DoneOp
  | UndoableOp
  | UndoneOp
  | NoteOp
  | RetryOp
  | ErrorOp
  | EndOp
  | ClearOp;

// --- kernel to page ---------------------------------------------------------------------------

type OpsMessage = { kind: 'ops'; ops: Op[] };
type ReplayMessage = { kind: 'replay'; view: string; ops: Op[] };
type PongMessage = { kind: 'pong'; seq: number };
type CompletionItem = { text: string; kind: string; detail: string };
type CompletionsMessage = {
  kind: 'completions';
  seq: number;
  view: string;
  items: CompletionItem[];
  error?: string;
};
type KeyView = {
  name: string;
  saved: boolean;
  where: string;
  environment: boolean;
  problem: string;
};
type ProviderView = {
  name: string;
  sign_in: string;
  key: KeyView | null;
};
type FormView = {
  providers: ProviderView[];
  provider: string;
  model: string;
  setting: string;
  problem: string;
};
type ChosenModel = { provider: string; model: string };
type FormMessage = {
  kind: 'form';
  form: FormView;
  view: string;
  said: string;
  outcome: string;
  chosen?: ChosenModel;
};
type ModelsMessage = {
  kind: 'models';
  provider: string;
  ids: string[];
  note: string;
};
type RunRow = { handle: string; state: string; tail: string; running: boolean };
type RunsMessage = { kind: 'runs'; runs: RunRow[] };

type ToPage =
  | OpsMessage
  | ReplayMessage
  | PongMessage
  | CompletionsMessage
  | FormMessage
  | ModelsMessage
  | RunsMessage;

// --- page to kernel ---------------------------------------------------------------------------

type Prompt = { kind: 'prompt'; text: string };
type Stop = { kind: 'stop' };
type Approve = { kind: 'approve'; id: string };
type Deny = { kind: 'deny'; id: string };
type Answer = { kind: 'answer'; id: string; text: string };
type Revise = { kind: 'revise'; id: string; text: string };
type NewChat = { kind: 'new' };
type Ready = { kind: 'ready'; view: string };
type Complete = {
  kind: 'complete';
  query: string;
  seq: number;
  view: string;
};
type Ping = { kind: 'ping'; seq: number };
type Run = { kind: 'run'; code: string };
type Undo = { kind: 'undo'; id: string };
type Fix = { kind: 'fix'; cell: string };
type StopRun = { kind: 'stop_run'; handle: string };
type FormAction = 'state' | 'models' | 'save' | 'forget';
type Form = {
  kind: 'form';
  do: FormAction;
  view: string;
  provider?: string;
  model?: string;
  key?: string;
};

type FromPage =
  | Prompt
  | Stop
  | Approve
  | Deny
  | Answer
  | Revise
  | NewChat
  | Ready
  | Complete
  | Ping
  | Run
  | Undo
  | Fix
  | StopRun
  | Form;

// --- the widget's model, as the page sees it (anywidget) --------------------------------------

/** The synced traits of `ChatWidget` (widget.py), by name. */
type Traits = {
  title: string;
  models: string[];
  model: string;
  mode: string;
  busy: boolean;
  tokens_in: number;
  tokens_out: number;
  estimated: boolean;
  context: number;
  budget: number;
  usage_note: string;
  kernel: string;
};

/** The part of anywidget's model the panel uses: its traits, and messages both ways. */
interface PanelModel {
  get<K extends keyof Traits>(name: K): Traits[K];
  set<K extends keyof Traits>(name: K, value: Traits[K]): void;
  save_changes(): void;
  send(message: FromPage): void;
  on(name: string, handler: (message: ToPage) => void): void;
  off(name: string, handler: (message: ToPage) => void): void;
}
