"""Settings of answer generation (``hopgraph ask``, ``POST /answer``): the cited context of a mode goes
to the OpenAI-compatible endpoint of the ``llm`` settings (kept apart to keep settings.py readable)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

DEFAULT_SYSTEM = (
    "You answer questions from the numbered context only. After every sentence of your answer, cite the "
    "passages it uses by their labels exactly as written in the context, in square brackets, e.g. "
    "[doc_1#chunk_2]. Never cite a label that is not in the context. If the context does not contain the "
    "answer, say so in one sentence without a citation.")
DEFAULT_USER = "# Context\n{context}\n\n# Question\n{question}\n\n# Answer (every sentence cited)\n"


class AnswerSettings(BaseModel):
    """Answers: the context sent, the prompt templates and the answer's length."""

    model_config = ConfigDict(frozen=True)

    mode: str = Field(default="graph", description="Retrieval mode whose context is sent (a request may override).")
    top_k: int = Field(default=8, ge=1, le=100, description="Passages retrieved for the context.")
    token_budget: int = Field(default=2000, ge=100, le=64000, description="Tokens of cited context sent.")
    max_tokens: int = Field(default=600, ge=16, le=16000, description="Tokens the answer may use.")
    system_prompt: str = Field(
        default=DEFAULT_SYSTEM, min_length=1, description="System message of answer generation (asks for a citation "
        "after every sentence).")
    user_prompt: str = Field(default=DEFAULT_USER, description="Template with {context} and {question}.")

    @field_validator("user_prompt")
    @classmethod
    def _has_slots(cls, v: str) -> str:
        missing = [slot for slot in ("{context}", "{question}") if slot not in v]
        if missing:
            raise ValueError(f"answer.user_prompt must contain {' and '.join(missing)}")
        try:
            v.format(context="", question="")
        except (KeyError, IndexError, ValueError) as exc:
            raise ValueError(f"answer.user_prompt is not a valid template ({exc}); "
                             "write literal braces as {{ and }}") from exc
        return v
