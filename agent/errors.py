"""One small exception hierarchy; the CLI prints any of these as a single line."""


class DisambigError(RuntimeError):
    """Base class: a problem the user can act on (printed without a traceback).

    A RuntimeError so the LangGraph server passes its message on to clients (it replaces the
    message of exception types it does not know with "An internal error occurred")."""


class InputError(DisambigError):
    """The question, file or option the user gave is unusable."""


class IndexMissingError(DisambigError):
    """No index, or an empty one, where a search was asked for."""


class ModelUnavailableError(DisambigError):
    """The model server cannot be reached or the model cannot be loaded."""


class ModelOutputError(DisambigError, ValueError):
    """The model answered with something that does not fit the expected shape. Raised by the
    reply parser; the structured-call layer retries once, then degrades to no answer (abstains)."""


MAX_QUESTION_CHARS = 8000


def validate_question(question: object) -> str:
    """Return the stripped question, or raise InputError saying what is wrong with it."""
    if not isinstance(question, str):
        raise InputError(f"question must be text, got {type(question).__name__}")
    text = question.strip()
    if not text:
        raise InputError("question is empty")
    if len(text) > MAX_QUESTION_CHARS:
        raise InputError(f"question is {len(text)} characters; the limit is {MAX_QUESTION_CHARS}")
    if "\x00" in text:
        raise InputError("question contains a NUL byte")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:  # invalid bytes in argv arrive as lone surrogates
        raise InputError(f"question is not valid UTF-8 text (position {error.start})") from None
    return text
