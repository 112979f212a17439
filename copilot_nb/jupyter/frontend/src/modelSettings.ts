/**
 * The provider and model in JupyterLab's settings (`schema/model.json`): the Settings Editor
 * shows them, and the chat panel's Model form saves them here after the kernel took them (the
 * panel raises CHOSEN_EVENT; `form.js`). Kernels read the same settings file themselves when
 * they need their default model (`agent/model_setting.py`), so nothing is sent to a kernel from
 * here. The key is never in these settings: JupyterLab's files are not owner-only.
 */
import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ISettingRegistry } from '@jupyterlab/settingregistry';

export const MODEL_PLUGIN_ID = 'copilot-nb:model';
const CHOSEN_EVENT = 'copilot-nb:model-chosen';
const LONGEST = 200;

/** What a panel's Save chose, as its event carries it. */
export interface IModelChoice {
  provider: string;
  model: string;
}

/** The choice an event carries, when it came from a chat panel and is two short strings. */
export function choiceOf(event: Event): IModelChoice | null {
  const target = event.target instanceof Element ? event.target : null;
  if (!target?.closest('.cnb-root')) {
    return null; // only a chat panel's form saves the model
  }
  const detail = (event as CustomEvent<unknown>).detail as Record<
    string,
    unknown
  > | null;
  const provider = detail?.provider;
  const model = detail?.model;
  if (
    typeof provider !== 'string' ||
    typeof model !== 'string' ||
    !provider ||
    !model ||
    provider.length > LONGEST ||
    model.length > LONGEST
  ) {
    return null;
  }
  return { provider, model };
}

export const modelSettingsPlugin: JupyterFrontEndPlugin<void> = {
  id: MODEL_PLUGIN_ID,
  description:
    'Keeps the provider and model the chat panel chose in JupyterLab settings, for new kernels.',
  autoStart: true,
  optional: [ISettingRegistry],
  activate: (app: JupyterFrontEnd, registry: ISettingRegistry | null) => {
    if (!registry) {
      return;
    }
    const loaded = registry.load(MODEL_PLUGIN_ID);
    document.addEventListener(CHOSEN_EVENT, event => {
      const choice = choiceOf(event);
      if (!choice) {
        return;
      }
      void loaded
        .then(settings =>
          // one save, so a kernel never reads the new provider beside the old model
          settings.save(
            JSON.stringify({ ...settings.user, ...choice }, null, 2)
          )
        )
        .catch(reason =>
          console.warn('copilot_nb: the model setting was not saved', reason)
        );
    });
    loaded.catch(reason =>
      console.warn('copilot_nb: model settings not loaded', reason)
    );
  }
};
