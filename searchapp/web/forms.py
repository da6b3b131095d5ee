"""Forms that validate the pages' query strings and turn them into selector arguments.

The pages are GET forms, so every parameter arrives as untrusted text in the URL. A bad value
(``threshold=abc``, ``page=-1``, ``limit=1000000000``) becomes a form error the page shows next
to the form, never an exception.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping, MutableMapping
from typing import Any

from django import forms
from django.conf import settings
from django.http import QueryDict
from django.template.defaultfilters import pluralize
from django.utils.html import conditional_escape
from django.utils.safestring import SafeString, mark_safe

from searchapp.grouping_params import (
    CONTAINMENT_MAX,
    CONTAINMENT_MIN,
    CONTAINMENT_MIN_WORDS,
    GROUP_METHOD_CHOICES,
    LIMIT_MAX,
    LIMIT_MIN,
    MAX_DISTANCE_MAX,
    MAX_DISTANCE_MIN,
    METHOD_CHOICES,
    METHOD_LABELS,
    PAGE_MAX,
    QUERY_MAX_LENGTH,
    THRESHOLD_MAX,
    THRESHOLD_MIN,
    THRESHOLD_STEP,
    TOPIC_MAX_LENGTH,
    nul_refused,
)
from searchapp.languages import LANGUAGE_NAMES
from searchapp.models import Corpus
from searchapp.selectors.corpus_overview import corpus_by_handle
from searchapp.selectors.dedup_settings import (
    default_containment,
    default_threshold_and_distance,
)
from searchapp.selectors.why import DEFAULT_VIEW, VIEWS

__all__ = ["CompareForm", "DocumentMethodForm", "SearchForm", "WhyForm"]

# The sort orders are these pages' own; the methods, their labels and every bound come from
# searchapp.grouping_params, the one owner every door shares.
SORT_CHOICES = [("relevance", "Relevance"), ("date", "Date (newest first)")]
LANG_CHOICES = [
    ("", "All languages"),
    *sorted(LANGUAGE_NAMES.items(), key=lambda item: item[1]),
]
# The search page's options (what its collapsed "Options" control holds); the others are the
# query, the page, the topic and its sub-topic.
OPTION_FIELDS = (
    "sort",
    "corpus",
    "lang",
    "group",
    "threshold",
    "max_distance",
    "containment",
    "limit",
)


def _attrs_html(attrs: Mapping[str, Any]) -> str:
    """Django's widgets/attrs.html in Python: False left out, True bare, the rest escaped."""
    return "".join(
        f" {name}" if value is True else f' {name}="{conditional_escape(str(value))}"'
        for name, value in attrs.items()
        if value is not False
    )


class PlainSelect(forms.Select):
    """A <select> written in Python, the one way the search form's selects are written (the
    markup of Django's select.html and select_option.html).

    Why not Django's own widgets: its renderers include a template per option, and the
    language list has 185. The search form written with them cost 8.8 ms of CPU through the
    template renderer and 5.0 ms through its Jinja2 renderer, against 1.5 ms with these
    (bench/render_bench.py). Every label and value is escaped as Django escapes them.
    """

    def render(
        self, name: str, value: Any, attrs: dict[str, Any] | None = None, renderer: Any = None
    ) -> SafeString:
        widget = self.get_context(name, value, attrs)["widget"]
        name_html = conditional_escape(widget["name"])
        parts = [f'<select name="{name_html}"{_attrs_html(widget["attrs"])}>']
        for group_name, group_choices, _index in widget["optgroups"]:
            if group_name:
                parts.append(f'\n  <optgroup label="{conditional_escape(group_name)}">')
            for option in group_choices:
                parts.append(
                    f'\n  <option value="{conditional_escape(str(option["value"]))}"'
                    f'{_attrs_html(option["attrs"])}>{conditional_escape(option["label"])}</option>\n'
                )
            if group_name:
                parts.append("\n  </optgroup>")
        parts.append("\n</select>")
        return mark_safe("".join(parts))


class FixedSelect(PlainSelect):
    """A PlainSelect over a fixed list of choices (the languages, the orders, the methods),
    its markup kept per name, value and attributes: the language list's 185 options were
    rebuilt and escaped on every page (~0.6 ms). The choices are part of the key."""

    _rendered: dict[tuple[object, ...], SafeString] = {}
    _MAX_RENDERED = 512

    def render(
        self, name: str, value: Any, attrs: dict[str, Any] | None = None, renderer: Any = None
    ) -> SafeString:
        try:
            key = (
                name,
                tuple(self.format_value(value)),
                tuple(sorted(self.build_attrs(self.attrs, attrs).items())),
                tuple(self.choices),
            )
            hash(key)
        except TypeError:  # an attribute value that cannot be a key: render it afresh
            return super().render(name, value, attrs, renderer)
        found = self._rendered.get(key)
        if found is None:
            found = super().render(name, value, attrs, renderer)
            if len(self._rendered) < self._MAX_RENDERED:
                self._rendered[key] = found
        return found


class FixedChoiceField(forms.ChoiceField):
    """A ChoiceField whose choices never change: forms share them instead of deep-copying
    them, as Django does for every form made (the language list: ~600 copies a page, ~1 ms)."""

    widget = FixedSelect

    def __deepcopy__(self, memo: dict[int, Any]) -> FixedChoiceField:
        # forms.Field.__deepcopy__ without ChoiceField's deep copy of the choices.
        result = copy.copy(self)
        memo[id(self)] = result
        result.widget = copy.deepcopy(self.widget, memo)
        result.error_messages = self.error_messages.copy()
        result.validators = self.validators[:]
        return result


class _ListedChoices(forms.models.ModelChoiceIterator):
    """The choices from one plain query. Django's iterator streams them through a server-side
    cursor, three round trips on PostgreSQL (DECLARE, FETCH, CLOSE) for a handful of corpora."""

    def __iter__(self) -> Any:
        if self.field.empty_label is not None:
            yield ("", self.field.empty_label)
        for obj in list(self.queryset):
            yield self.choice(obj)


class CorpusChoiceField(forms.ModelChoiceField):
    """The corpus filter, given as the API takes it: the name a hit carries, or the corpus's
    id (selectors.corpus_overview.corpus_by_handle decides which), so the same address filters
    alike on the page and in the API, and an unknown one is refused in the API's words."""

    iterator = _ListedChoices

    def validate_no_null_characters(self, value: Any) -> None:
        # Django's own check says "Null characters are not allowed."; the page says it in the
        # words of its other fields and of the API (grouping_params.nul_refused).
        if "\x00" in str(value):
            raise forms.ValidationError(
                nul_refused("The corpus"), code="null_characters_not_allowed"
            )

    def _pk(self, value: Any) -> Any:
        """The id ``value`` names, or ``value`` itself when it names none (refused later)."""
        if value in self.empty_values or "\x00" in str(value):
            return value
        pk = corpus_by_handle(str(value).strip())
        return value if pk is None else pk

    def to_python(self, value: Any) -> Corpus | None:
        if value in self.empty_values:
            return None
        self.validate_no_null_characters(value)
        pk = self._pk(value)
        if pk is value:
            raise forms.ValidationError(
                "There is no corpus named %(name)s.",
                code="invalid_choice",
                params={"name": repr(str(value).strip())},
            )
        corpus: Corpus | None = super().to_python(pk)
        return corpus

    def bound_data(self, data: Any, initial: Any) -> Any:
        # A corpus given by name shows as chosen in the list, whose options carry ids.
        return self._pk(super().bound_data(data, initial))


def _mutable_copy(data: Mapping[str, Any]) -> MutableMapping[str, Any]:
    """A copy of a bound form's data that defaults can be written into.

    The pages bind request.GET, a QueryDict (a dict subclass whose copy() is mutable).
    """
    if isinstance(data, dict):
        return data.copy()
    return dict(data)


class PlainInput(forms.widgets.Input):
    """An <input> written in Python, the one way the search form's inputs are written (the
    markup of Django's input.html and attrs.html).

    Why: Django's template renderer cost each of the search page's inputs (the query,
    threshold, distance, limit and the hidden ones) ~0.3 ms, ~1.5 ms a page (profiled at 1M
    documents). The value and every attribute are escaped as Django escapes them.
    """

    def render(
        self, name: str, value: Any, attrs: dict[str, Any] | None = None, renderer: Any = None
    ) -> SafeString:
        widget = self.get_context(name, value, attrs)["widget"]
        shown = widget["value"]
        value_html = "" if shown is None else f' value="{conditional_escape(str(shown))}"'
        type_html, name_html = conditional_escape(widget["type"]), conditional_escape(name)
        attrs_html = _attrs_html(widget["attrs"])
        return mark_safe(f'<input type="{type_html}" name="{name_html}"{value_html}{attrs_html}>')


class PlainTextInput(PlainInput, forms.TextInput):
    pass


class PlainNumberInput(PlainInput, forms.NumberInput):
    pass


class PlainHiddenInput(PlainInput, forms.HiddenInput):
    pass


class RangeInput(PlainNumberInput):
    input_type = "range"


class SearchForm(forms.Form):
    """The search page's parameters (also the compare page's, without ``page``)."""

    q = forms.CharField(
        label="Search",
        required=False,
        max_length=QUERY_MAX_LENGTH,
        strip=True,
        error_messages={"null_characters_not_allowed": nul_refused("The query")},
        widget=PlainTextInput(
            attrs={
                "type": "search",
                "placeholder": "Search the corpus",
                "autocomplete": "off",
                "aria-describedby": "syntax-help",
            }
        ),
    )
    sort = FixedChoiceField(label="Sort by", choices=SORT_CHOICES, required=False)
    corpus = CorpusChoiceField(
        label="Corpus",
        queryset=Corpus.objects.order_by("name"),
        required=False,
        empty_label="All corpora",
        widget=PlainSelect,
    )
    lang = FixedChoiceField(label="Language", choices=LANG_CHOICES, required=False)
    group = FixedChoiceField(
        label="Fold near-duplicates with", choices=GROUP_METHOD_CHOICES, required=False
    )
    threshold = forms.FloatField(
        label="Similarity threshold",
        required=False,
        min_value=THRESHOLD_MIN,
        max_value=THRESHOLD_MAX,
        help_text="MinHash: estimated Jaccard similarity a result needs to fold under another.",
        widget=RangeInput(
            attrs={"min": THRESHOLD_MIN, "max": THRESHOLD_MAX, "step": THRESHOLD_STEP}
        ),
    )
    max_distance = forms.IntegerField(
        label="Max. distance (bits)",
        required=False,
        min_value=MAX_DISTANCE_MIN,
        max_value=MAX_DISTANCE_MAX,
        help_text="SimHash: largest Hamming distance, out of 64 bits, that still folds.",
        widget=PlainNumberInput(
            attrs={"min": MAX_DISTANCE_MIN, "max": MAX_DISTANCE_MAX, "step": 1}
        ),
    )
    containment = forms.FloatField(
        label="Fold a text inside another from",
        required=False,
        min_value=CONTAINMENT_MIN,
        max_value=CONTAINMENT_MAX,
        help_text=(
            "Share of a result's 5-word phrases found in another result (texts of "
            f"{CONTAINMENT_MIN_WORDS} words or more) at which it folds under that fuller one."
        ),
        widget=RangeInput(
            attrs={"min": CONTAINMENT_MIN, "max": CONTAINMENT_MAX, "step": THRESHOLD_STEP}
        ),
    )
    limit = forms.IntegerField(
        label="Results to group",
        required=False,
        min_value=LIMIT_MIN,
        max_value=LIMIT_MAX,
        help_text="How many of the top hits are grouped.",
        widget=PlainNumberInput(attrs={"min": LIMIT_MIN, "max": LIMIT_MAX, "step": 1}),
    )
    page = forms.IntegerField(
        required=False, min_value=1, max_value=PAGE_MAX, widget=PlainHiddenInput()
    )
    # The topic facet's filter: a topic's label (the facet's links set it; a label that is not
    # among the results shows them all, with a notice).
    topic = forms.CharField(
        label="Topic",
        required=False, max_length=TOPIC_MAX_LENGTH, strip=True, widget=PlainHiddenInput(),
        error_messages={"null_characters_not_allowed": nul_refused("The topic")},
    )
    # One of that topic's sub-topics (a large topic's links beneath it set both).
    subtopic = forms.CharField(
        label="Sub-topic",
        required=False, max_length=TOPIC_MAX_LENGTH, strip=True, widget=PlainHiddenInput(),
        error_messages={"null_characters_not_allowed": nul_refused("The sub-topic")},
    )

    def __init__(self, data: Any = None, *args: Any, **kwargs: Any) -> None:
        super().__init__(data, *args, **kwargs)
        # Unbound and bound-but-missing fields show the settings' defaults, read at request time.
        self.fields["group"].initial = settings.DEDUP_DEFAULT_METHOD
        self.fields["sort"].initial = "relevance"
        # The grouping settings in force: staff's threshold and SimHash distance once the
        # rebuild that applies them is active, else DEDUP_DEFAULT_THRESHOLD and
        # grouping_params.DEFAULT_MAX_DISTANCE.
        threshold, distance = default_threshold_and_distance()
        self.fields["threshold"].initial = threshold
        self.fields["max_distance"].initial = distance
        self.fields["containment"].initial = default_containment()
        self.fields["limit"].initial = settings.SEARCH_RESULT_LIMIT
        # A value missing from the query string means "the default", so the form re-renders it.
        if self.is_bound:
            merged = _mutable_copy(self.data)
            for name, field in self.fields.items():
                if name not in merged or merged.get(name) in ("", None):
                    initial = field.initial
                    if initial is not None:
                        merged[name] = initial
            # An over-long query is refused (clean_q), and only its start goes back into the
            # page (query box, title): the page must not grow with whatever a URL carries.
            query = str(merged.get("q") or "")
            self._query_length = len(query.strip())
            if len(query) > QUERY_MAX_LENGTH:
                merged["q"] = query[:QUERY_MAX_LENGTH]
            self.data = merged

    def clean_q(self) -> str:
        if getattr(self, "_query_length", 0) > QUERY_MAX_LENGTH:
            raise forms.ValidationError(
                "The query is too long: at most %(limit)s characters (it has %(length)s).",
                code="max_length",
                params={"limit": QUERY_MAX_LENGTH, "length": f"{self._query_length:,}"},
            )
        return self.cleaned_data["q"]

    def clean_group(self) -> str:
        return self.cleaned_data.get("group") or settings.DEDUP_DEFAULT_METHOD

    def clean_sort(self) -> str:
        return self.cleaned_data.get("sort") or "relevance"

    def _is_default(self, name: str) -> bool:
        """Whether a valid form's ``name`` says no more than leaving it out would."""
        value = self.cleaned_data.get(name)
        if value in (None, "", []):
            return True
        group = self.cleaned_data.get("group")
        # A method's own setting means nothing under another method: the search ignores it.
        if (
            (name == "threshold" and group != "minhash")
            or (name == "max_distance" and group != "simhash")
            or (name == "containment" and group == "none")
        ):
            return True
        if name == "page":
            return value == 1
        return bool(value == self.fields[name].initial)

    def non_default_parameters(self) -> QueryDict:
        """The parameters of a valid bound form that differ from their defaults, as given.

        The pages' addresses and links carry only these: ``?q=energy`` rather than every option
        spelled out at its default. A parameter left out means "the default in force", so a link
        follows staff's threshold when it changes.
        """
        params = QueryDict(mutable=True)
        for name in self.fields:
            if not self._is_default(name):
                raw = self.cleaned_data[name] if name == "q" else self.data.get(name)
                params[name] = str(raw).strip()
        return params

    def option_choices(self) -> list[str]:
        """The options of a valid bound form that differ from their defaults, in plain words
        (the collapsed "Options" control's summary)."""
        if not self.is_bound or not self.is_valid():
            return []
        data = self.cleaned_data
        words: list[str] = []
        for name in OPTION_FIELDS:
            if name not in self.fields or self._is_default(name):
                continue
            value = data[name]
            if name == "sort":
                words.append("newest first" if value == "date" else "most relevant first")
            elif name == "corpus":
                words.append(f"only {value.name}")
            elif name == "lang":
                words.append(f"only {LANGUAGE_NAMES.get(value, value)}")
            elif name == "group":
                words.append(
                    "not folded" if value == "none" else f"folds with {METHOD_LABELS[value]}"
                )
            elif name == "threshold":
                words.append(f"folds at {math.floor(value * 100 + 1e-6)}% similar")
            elif name == "max_distance":
                words.append(f"folds at {value} bit{pluralize(value)} apart")
            elif name == "containment":
                words.append(f"folds a text {math.floor(value * 100 + 1e-6)}% inside another")
            elif name == "limit":
                words.append(f"topics of the first {value:,}")
        return words

    def selector_kwargs(self, *, with_page: bool = True) -> dict[str, Any]:
        """Keyword arguments for ``search_grouped`` (or ``compare_search`` without the page)."""
        data = self.cleaned_data
        group = data["group"]
        kwargs: dict[str, Any] = {
            "query": data.get("q") or "",
            "group": group,
            "limit": data.get("limit") or settings.SEARCH_RESULT_LIMIT,
            "sort": data.get("sort") or "relevance",
            "corpus_id": corpus.pk if (corpus := data.get("corpus")) is not None else None,
        }
        if group == "minhash":
            kwargs["threshold"] = data.get("threshold")
        elif group == "simhash":
            kwargs["max_distance"] = data.get("max_distance")
        if group != "none":
            kwargs["containment"] = data.get("containment")
        if with_page:
            kwargs["page"] = data.get("page") or 1
            kwargs["topics"] = settings.SEARCH_TOPICS
            kwargs["topic"] = data.get("topic") or None
            kwargs["subtopic"] = data.get("subtopic") or None
            kwargs["lang"] = data.get("lang") or None
        return kwargs


class CompareForm(SearchForm):
    """The compare page: the same parameters, no pagination (it shows the first page of each)."""

    def __init__(self, data: Any = None, *args: Any, **kwargs: Any) -> None:
        super().__init__(data, *args, **kwargs)
        del self.fields["page"]
        del self.fields["topic"]
        del self.fields["subtopic"]
        group_field = self.fields["group"]
        assert isinstance(group_field, forms.ChoiceField)  # declared on SearchForm
        # The signature methods only: "none" on both sides would compare a list with itself.
        group_field.choices = METHOD_CHOICES


class DocumentMethodForm(forms.Form):
    """The document page's method and threshold (which near-duplicates to list)."""

    method = forms.ChoiceField(label="Method", choices=METHOD_CHOICES, required=False)
    threshold = forms.FloatField(
        label="Similarity threshold",
        required=False,
        min_value=THRESHOLD_MIN,
        max_value=THRESHOLD_MAX,
    )

    def __init__(self, data: Any = None, *args: Any, **kwargs: Any) -> None:
        super().__init__(data, *args, **kwargs)
        self.fields["method"].initial = settings.DEDUP_DEFAULT_METHOD
        if self.is_bound and not self.data.get("method"):
            merged = _mutable_copy(self.data)
            merged["method"] = settings.DEDUP_DEFAULT_METHOD
            self.data = merged

    def selector_kwargs(self) -> dict[str, Any]:
        data = self.cleaned_data
        return {
            "method": data.get("method") or settings.DEDUP_DEFAULT_METHOD,
            "threshold": data.get("threshold"),
        }


class WhyForm(DocumentMethodForm):
    """The "why?" page's method and view (how the two documents are compared)."""

    view = forms.ChoiceField(label="View", choices=list(VIEWS.items()), required=False)
    # "about": the result list showed the signatures' estimate (its texts too long to compare
    # there), so the page leads with that same figure; the exact one stays under "Figures".
    figure = forms.ChoiceField(
        label="Figure", choices=[("exact", "exact"), ("about", "estimate")], required=False
    )

    def selector_kwargs(self) -> dict[str, Any]:
        return {
            **super().selector_kwargs(),
            "view": self.cleaned_data.get("view") or DEFAULT_VIEW,
            "estimated": self.cleaned_data.get("figure") == "about",
        }
