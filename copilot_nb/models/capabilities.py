"""What a model can take besides text (pure): images, and which images one request carries.

Whether a model accepts images comes, best first, from the user's setting (`vision=` on the
model), the provider's own word (GitHub Copilot's model list: `capabilities.supports.vision`;
Ollama's `POST /api/show`: `"vision"` in `capabilities`), and else a table of model-name
prefixes (`VISION_MODELS`). A model nobody knows is sent no images.

A request carries the images of the tool results of the current turn only (after the latest
user message), and those a user message holds (a proxy client's own, which it sends again with
each turn as it means them to be seen), the newest `max_images` of them; an older turn's tool
images are left to their text (`[image/png 640x480]`), which every tool result keeps. An image
larger than `max_bytes`, or of a type the model does not take, is never sent. A larger image
than the model's family uses (`IMAGE_SIDES`) is scaled down first (`image_fit.py`): the
provider would do it on its side.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from ..messages import Image, Message, ToolResult, UserMessage, as_messages
from .image_fit import fit_image

T = TypeVar("T")

IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
"""The image types every provider we speak accepts."""
MAX_IMAGES = 4
"""Images one request carries at most (the newest)."""
MAX_IMAGE_BYTES = 5 * 1024 * 1024
"""The largest image sent (Anthropic's limit per image); a larger one stays text."""

VISION_MODELS: dict[str, bool] = {
    "gpt-4o": True,
    "chatgpt-4o": True,
    "gpt-4-turbo": True,
    "gpt-4.1": True,
    "gpt-4.5": True,
    "gpt-5": True,
    "o1": True,
    "o1-mini": False,
    "o1-preview": False,
    "o3": True,
    "o3-mini": False,
    "o4-mini": True,
    "claude-3": True,
    "claude-sonnet-4": True,
    "claude-opus-4": True,
    "claude-haiku-4": True,
    "gemini": True,
}
"""Whether a model accepts images, by model-name prefix (the longest match wins); a model not
listed is sent none. Copilot's and Ollama's own answers come first."""

IMAGE_SIDES: dict[str, tuple[int, int | None]] = {
    "": (1568, None),
    "gpt": (2048, 768),
    "chatgpt": (2048, 768),
    "o1": (2048, 768),
    "o3": (2048, 768),
    "o4": (2048, 768),
    "claude": (1568, None),
    "gemini": (3072, None),
}
"""The pixels each family uses, long side and short side, by model-name prefix, as the
providers state them: Anthropic scales a long side past 1568 px down; OpenAI fits an image into
2048 px, then its short side into 768 px. Anything else gets Anthropic's, the smallest."""


@dataclass(frozen=True, kw_only=True)
class ImageLimits:
    """How many images, how large and of which types one request may carry."""

    max_images: int = MAX_IMAGES
    max_bytes: int = MAX_IMAGE_BYTES
    media_types: tuple[str, ...] = IMAGE_TYPES
    max_side: int = 1568
    """Pixels on the long side; a larger image is scaled down before it is sent."""
    max_short_side: int | None = None

    def narrowed(
        self,
        *,
        max_images: int | None = None,
        max_bytes: int | None = None,
        media_types: Sequence[str] = (),
    ) -> ImageLimits:
        """These limits, made stricter by a provider's own (Copilot lists them per model)."""
        return replace(
            self,
            max_images=min(self.max_images, max_images or self.max_images),
            max_bytes=min(self.max_bytes, max_bytes or self.max_bytes),
            media_types=tuple(t for t in self.media_types if t in media_types)
            if media_types
            else self.media_types,
        )


DEFAULT_IMAGE_LIMITS = ImageLimits()


def by_model_name(name: str, table: Mapping[str, T], default: T) -> T:
    """A model's entry in a table keyed by name prefix, the longest prefix winning; the name is
    read without its router's prefix and case (`openai/GPT-4o` is `gpt-4o`)."""
    key = name.rsplit("/", 1)[-1].lower()
    for prefix in sorted(table, key=len, reverse=True):
        if key.startswith(prefix):
            return table[prefix]
    return default


def vision_by_name(name: str) -> bool:
    """Whether the table says the model accepts images (`gpt-4o`, `openai/gpt-4.1`)."""
    return by_model_name(name, VISION_MODELS, False)


def image_limits_for(
    name: str, setting: bool | None, provider_says: bool | None = None
) -> ImageLimits | None:
    """The limits of a model that accepts images, None for one that does not: the user's
    `setting` wins, then what the provider says, then the name table."""
    long_side, short_side = by_model_name(name, IMAGE_SIDES, IMAGE_SIDES[""])
    limits = replace(DEFAULT_IMAGE_LIMITS, max_side=long_side, max_short_side=short_side)
    for answer in (setting, provider_says):
        if answer is not None:
            return limits if answer else None
    return limits if vision_by_name(name) else None


def model_image_limits(model: Any) -> ImageLimits | None:
    """What any model object takes (ours have `image_limits()`; others take no images)."""
    method = getattr(model, "image_limits", None)
    limits = method() if callable(method) else None
    return limits if isinstance(limits, ImageLimits) else None


def carries_images(messages: Sequence[Message | Mapping[str, Any]]) -> bool:
    """Whether a conversation holds any image to send."""
    return any(isinstance(m, (ToolResult, UserMessage)) and m.images for m in messages)


def images_to_send(
    messages: Sequence[Message | Mapping[str, Any]], limits: ImageLimits | None
) -> list[Message]:
    """The conversation with only the images a request sends (see the module's docstring);
    messages that keep all their images are the same objects."""
    out = as_messages(messages)
    if not carries_images(out):
        return out
    turn = max((i for i, m in enumerate(out) if isinstance(m, UserMessage)), default=-1)
    room = limits.max_images if limits is not None else 0
    for index in range(len(out) - 1, -1, -1):
        message = out[index]
        if not isinstance(message, (ToolResult, UserMessage)) or not message.images:
            continue
        kept: list[Image] = []
        if limits is not None and (index > turn or isinstance(message, UserMessage)):
            for image in reversed(message.images):
                fitted = fitted_image(image, limits) if room > 0 else None
                if fitted is not None:
                    kept.append(fitted)
                    room -= 1
        kept.reverse()
        if kept != list(message.images):
            out[index] = replace(message, images=tuple(kept))
    return out


def fitted_image(image: Image, limits: ImageLimits) -> Image | None:
    """The image as a reader with these limits is sent it (scaled to its size), or None."""
    if image.media_type not in limits.media_types:
        return None
    return fit_image(
        image,
        max_side=limits.max_side,
        max_bytes=limits.max_bytes,
        max_short_side=limits.max_short_side,
    )


def ollama_capabilities(payload: Any) -> frozenset[str] | None:
    """`capabilities` of Ollama's `/api/show` answer (`["completion", "tools", "vision"]`);
    None when it has none (older Ollama did not say)."""
    listed = payload.get("capabilities") if isinstance(payload, Mapping) else None
    if not isinstance(listed, list):
        return None
    return frozenset(str(item) for item in listed)
