"""The base of every instance and solution model: frozen, strict about unknown fields and
non-finite numbers, and raising :class:`InvalidInstanceError` instead of pydantic's
``ValidationError`` whichever way it is built (``Job(...)``, ``model_validate``, JSON).

Only the outermost call converts: nested models are validated by pydantic's core without going
through the Python ``__init__`` below (it is marked as pydantic's base ``__init__``, so pydantic
does not switch to calling it for every nested model), so the one conversion sees every error
with its full path (``jobs[3].deadlines[0].value``).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from .errors import InvalidInstanceError
from .pydantic_errors import invalid_instance_error

_TOO_DEEP = "the input is nested too deeply"
_Model = TypeVar("_Model", bound="FrozenModel")


class FrozenModel(BaseModel):
    """Immutable, ``extra="forbid"``, ``allow_inf_nan=False``; bad input → InvalidInstanceError."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    def __init__(self, /, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as err:
            raise invalid_instance_error(err) from None
        except RecursionError:
            raise InvalidInstanceError("", _TOO_DEEP) from None

    # Keep pydantic's fast path for nested models: it calls a custom __init__ for every nested
    # model unless the __init__ is marked as its own (the conversion belongs at the top only).
    __init__.__pydantic_base_init__ = True  # type: ignore[attr-defined]

    @classmethod
    def model_validate(cls, obj: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().model_validate(obj, *args, **kwargs)
        except ValidationError as err:
            raise invalid_instance_error(err) from None
        except RecursionError:
            raise InvalidInstanceError("", _TOO_DEEP) from None

    @classmethod
    def model_validate_json(cls, json_data: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().model_validate_json(json_data, *args, **kwargs)
        except InvalidInstanceError:
            raise
        except ValidationError as err:
            raise invalid_instance_error(err) from None
        except (RecursionError, ValueError) as err:
            raise InvalidInstanceError("", f"not a readable JSON document: {err}") from None

    @classmethod
    def model_validate_strings(cls, obj: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().model_validate_strings(obj, *args, **kwargs)
        except ValidationError as err:
            raise invalid_instance_error(err) from None
        except RecursionError:
            raise InvalidInstanceError("", _TOO_DEEP) from None

    def model_copy(
        self: _Model, *, update: Mapping[str, Any] | None = None, deep: bool = False
    ) -> _Model:
        """pydantic's copy, without the values ``functools.cached_property`` kept on this
        object when ``update`` changes fields: a derived view (``job_index``, a model's slow
        factors) is computed again from the copy's own fields, never carried over stale (reconfig's
        slow-factor table was, before 50b1ebb). Like pydantic's, the update is not validated:
        it is for tests and internal edits; build from data with ``model_validate``."""
        copied = super().model_copy(update=update, deep=deep)
        if update:
            for klass in type(self).__mro__:
                for name, attr in vars(klass).items():
                    if isinstance(attr, cached_property):
                        copied.__dict__.pop(name, None)
        return copied
