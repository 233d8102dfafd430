"""Avro compatibility: can a reader with one schema read data written with another?

Written from the Avro specification's "Schema Resolution" rules, as Java Avro's
``SchemaCompatibility`` (which Confluent uses) applies them:

* primitives match themselves; int is promoted to long, float, double; long to
  float, double; float to double; string and bytes read each other;
* records, enums and fixed match by unqualified name, or when the reader's aliases
  name the writer; fixed sizes must be equal;
* each reader field is read from the writer field of the same name (or one of the
  reader field's aliases); a reader field the writer lacks needs a default;
  writer fields the reader lacks are skipped;
* every writer enum symbol must be a reader symbol, unless the reader enum has a
  default;
* arrays and maps compare items and values;
* a writer union needs every branch readable; a reader union needs a branch that
  reads the writer's (non-union) schema.

Messages follow Confluent's ``{errorType:..., description:..., additionalInfo:...}``.
"""

from __future__ import annotations

from typing import Any

from samsa.registry.formats.avro import AvroSchema, full_name, space_of

PROMOTIONS = {
    "long": {"int"},
    "float": {"int", "long"},
    "double": {"int", "long", "float"},
    "string": {"bytes"},
    "bytes": {"string"},
}


def read_errors(reader: AvroSchema, writer: AvroSchema) -> list[str]:
    return _Resolver(reader.names, writer.names).check(reader.parsed, writer.parsed, "/")


def _message(kind: str, description: str, info: str) -> str:
    return f"{{errorType:'{kind}', description:'{description}', additionalInfo:'{info}'}}"


class _Resolver:
    def __init__(self, reader_names: dict[str, Any], writer_names: dict[str, Any]) -> None:
        self.reader_names = reader_names
        self.writer_names = writer_names
        # Pairs of named types being compared: recursive types are assumed compatible
        # while their own comparison is in progress, as Java's memo table does.
        self.in_progress: set[tuple[str, str]] = set()

    def resolve(self, node: Any, names: dict[str, Any]) -> Any:
        while isinstance(node, str) and node in names:
            node = names[node]
        if isinstance(node, dict) and not isinstance(node.get("type"), str):
            return self.resolve(node["type"], names)
        return node

    def check(self, reader: Any, writer: Any, path: str) -> list[str]:
        reader = self.resolve(reader, self.reader_names)
        writer = self.resolve(writer, self.writer_names)
        if isinstance(writer, list):
            errors: list[str] = []
            for index, branch in enumerate(writer):
                errors += self.check(reader, branch, f"{path.rstrip('/')}/{index}")
                if errors:
                    break
            return errors
        if isinstance(reader, list):
            for branch in reader:
                if not self.check(branch, writer, path):
                    return []
            shown = _type_of(writer)
            return [
                _message(
                    "MISSING_UNION_BRANCH",
                    f"The new schema is missing a type inside a union field at path '{path}' "
                    f"in the old schema: {shown}",
                    f"reader union lacking writer type: {shown.upper()}",
                )
            ]
        r_type, w_type = _type_of(reader), _type_of(writer)
        if r_type != w_type:
            if w_type in PROMOTIONS.get(r_type, ()):
                return []
            return [
                _message(
                    "TYPE_MISMATCH",
                    f"The type (path '{path}') of a field in the new schema does not match "
                    "with the old schema",
                    f"reader type: {r_type.upper()} not compatible with writer type: "
                    f"{w_type.upper()}",
                )
            ]
        if r_type in ("record", "error", "enum", "fixed"):
            name_error = self._names_match(reader, writer, path)
            if name_error:
                return [name_error]
        if r_type in ("record", "error"):
            return self._records(reader, writer, path)
        if r_type == "enum":
            missing = [s for s in writer["symbols"] if s not in reader["symbols"]]
            if missing and reader.get("default") is None:
                return [
                    _message(
                        "MISSING_ENUM_SYMBOLS",
                        f"The new schema is missing enum symbols '{missing}' at path '{path}' "
                        "in the old schema",
                        str(missing),
                    )
                ]
            return []
        if r_type == "fixed" and reader["size"] != writer["size"]:
            return [
                _message(
                    "FIXED_SIZE_MISMATCH",
                    f"The size of FIXED type field at path '{path}' in the new schema does not "
                    "match with the old schema",
                    f"expected: {writer['size']}, found: {reader['size']}",
                )
            ]
        if r_type == "array":
            return self.check(reader["items"], writer["items"], f"{path.rstrip('/')}/items")
        if r_type == "map":
            return self.check(reader["values"], writer["values"], f"{path.rstrip('/')}/values")
        return []

    def _names_match(self, reader: dict[str, Any], writer: dict[str, Any], path: str) -> str:
        r_name, w_name = reader["name"], writer["name"]
        if r_name.rsplit(".", 1)[-1] == w_name.rsplit(".", 1)[-1]:
            return ""
        aliases = {full_name(a, space_of(r_name)) for a in reader.get("aliases") or ()}
        if w_name in aliases:
            return ""
        return _message(
            "NAME_MISMATCH",
            f"The name of the schema has changed (path '{path}')",
            f"expected: {w_name}",
        )

    def _records(self, reader: dict[str, Any], writer: dict[str, Any], path: str) -> list[str]:
        pair = (reader["name"], writer["name"])
        if pair in self.in_progress:
            return []
        self.in_progress.add(pair)
        try:
            writer_fields = {f["name"]: f for f in writer["fields"]}
            errors: list[str] = []
            base = path.rstrip("/")
            for index, field in enumerate(reader["fields"]):
                source = writer_fields.get(field["name"])
                for alias in field.get("aliases") or ():
                    source = source or writer_fields.get(alias)
                if source is not None:
                    errors += self.check(
                        field["type"], source["type"], f"{base}/fields/{index}/type"
                    )
                elif "default" not in field:
                    errors.append(
                        _message(
                            "READER_FIELD_MISSING_DEFAULT_VALUE",
                            f"The field '{field['name']}' at path '{base}/fields/{index}' in "
                            "the new schema has no default value and is missing in the old "
                            "schema",
                            field["name"],
                        )
                    )
            return errors
        finally:
            self.in_progress.discard(pair)


def _type_of(node: Any) -> str:
    if isinstance(node, str):
        return node
    if isinstance(node, list):
        return "union"
    kind = node.get("type")
    return kind if isinstance(kind, str) else "union"
