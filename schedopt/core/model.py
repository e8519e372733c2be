"""The base of every instance and solution model: frozen, strict about unknown fields and
non-finite numbers, and raising :class:`InvalidInstanceError` instead of pydantic's
``ValidationError`` whichever way it is built (``Job(...)``, ``model_validate``, JSON).

Only the outermost call converts: nested models are validated by pydantic's core without going
through the Python ``__init__`` below (it is marked as pydantic's base ``__init__``, so pydantic
does not switch to calling it for every nested model), so the one conversion sees every error
with its full path (``jobs[3].deadlines[0].value``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cached_property
from typing import Any, TypeVar, cast

from pydantic import BaseModel, ConfigDict, ValidationError

from .errors import InvalidInstanceError
from .pydantic_errors import invalid_instance_error

_TOO_DEEP = "the input is nested too deeply"
_Model = TypeVar("_Model", bound="FrozenModel")
_View = TypeVar("_View")


class DerivedViews:
    """What modules derive from one frozen instance (arrays a validator reads, a cluster's
    tables), each under its own key, made once and kept as long as the instance.

    Compared by identity, so pydantic's equality of two instances still compares their fields
    only (a view holding arrays has no truth value); pickled and copied empty, so an instance
    sent to a worker process carries its fields, not what this process derived from them (the
    worker derives it again when it asks). A view must not refer back to its instance: the
    cycle would be freed by the cyclic collector only."""

    __slots__ = ("_views",)

    def __init__(self) -> None:
        self._views: dict[str, Any] = {}

    def get(self, key: str, make: Callable[[], _View]) -> _View:
        if key not in self._views:
            self._views[key] = make()
        return cast(_View, self._views[key])

    def __contains__(self, key: object) -> bool:
        return key in self._views

    def __reduce__(self) -> tuple[type[DerivedViews], tuple[()]]:
        return (DerivedViews, ())


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

    @cached_property
    def derived_views(self) -> DerivedViews:
        """This instance's derived views (:class:`DerivedViews`; read through :meth:`derived`).
        A ``model_copy`` with an update starts with none (see there)."""
        return DerivedViews()

    def derived(self, key: str, make: Callable[[], _View]) -> _View:
        """``make()``, computed once per instance and ``key`` (the instance is immutable): for
        what validate, evaluate and metrics of one answer would otherwise each derive again.
        ``key`` names the module that owns the view (``"timeshare.validate"``)."""
        return self.derived_views.get(key, make)

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
