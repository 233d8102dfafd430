"""``samsa schemas list|get|register|check|delete|config``: the schema registry over its REST API.

The registry is any Confluent-compatible one (Samsa's: ``samsa broker
--registry-listen``), reached at ``--registry-url`` (``$SAMSA_REGISTRY_URL``,
default ``http://127.0.0.1:8081``).  ``--command-config`` takes the
properties Confluent's clients take for it: ``basic.auth.user.info=USER:PASSWORD``
(with ``basic.auth.credentials.source=USER_INFO``) and ``ssl.ca.location`` for
a registry whose certificate a private CA signs (each also with the
``schema.registry.`` prefix).  A refusal prints the registry's message and
error code and exits 2; ``check`` exits 1 when the schema is incompatible.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import ssl
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from samsa.cli.action_table import Action
from samsa.cli.common import (
    CliError,
    add_output_arg,
    add_subcommand,
    console,
    print_json,
    print_table,
)
from samsa.config.values import parse_properties
from samsa.errors import ConfigError

URL_ENV = "SAMSA_REGISTRY_URL"
DEFAULT_URL = "http://127.0.0.1:8081"
CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"
TYPES = ("AVRO", "PROTOBUF", "JSON")
LEVELS = (
    "NONE", "BACKWARD", "BACKWARD_TRANSITIVE", "FORWARD", "FORWARD_TRANSITIVE", "FULL",
    "FULL_TRANSITIVE",
)  # fmt: skip
MODES = ("READWRITE", "READONLY", "READONLY_OVERRIDE", "IMPORT")


class RegistryRefusal(CliError):
    """The registry answered with an error (its message and error code)."""


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "schemas",
        help="the schema registry: subjects, versions, compatibility",
        description="Subjects and schemas of a schema registry (Confluent's REST API).",
        epilog="examples:\n  samsa schemas register orders-value --schema-file order.avsc\n"
        "  samsa schemas list\n  samsa schemas get orders-value --version latest",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = p.add_subparsers(dest="schemas_action", required=True, metavar="ACTION")
    for action in ACTIONS:
        a = add_subcommand(actions, action.name, action.help, action.example)
        action.arguments(a)
        _add_connection_args(a, action.timeout)
        if action.output:
            add_output_arg(a)
        a.set_defaults(run=_guarded(action.run))


def _add_connection_args(a: argparse.ArgumentParser, timeout: float) -> None:
    a.add_argument(
        "--registry-url",
        metavar="URL",
        default=os.environ.get(URL_ENV) or DEFAULT_URL,
        help=f"the registry (default ${URL_ENV} or {DEFAULT_URL})",
    )
    a.add_argument(
        "--command-config",
        metavar="FILE",
        help="client properties: basic.auth.user.info=USER:PASSWORD, ssl.ca.location=FILE",
    )
    a.add_argument("--timeout", type=float, default=timeout, metavar="SECONDS")


def _guarded(work: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        try:
            return work(args)
        except BrokenPipeError:
            return 0
        except CliError as exc:
            print(f"samsa schemas: {exc}", file=sys.stderr)
            return 2

    return run


# -- the registry over HTTP --------------------------------------------------------------
class RegistryClient:
    def __init__(self, args: argparse.Namespace) -> None:
        self.url = str(args.registry_url).rstrip("/")
        self.timeout = float(args.timeout)
        props = _properties(getattr(args, "command_config", None))
        self.headers = {"Accept": CONTENT_TYPE, "Content-Type": CONTENT_TYPE}
        user_info = props.get("basic.auth.user.info")
        if user_info:
            token = base64.b64encode(user_info.encode()).decode()
            self.headers["Authorization"] = f"Basic {token}"
        ca = props.get("ssl.ca.location")
        self.context = ssl.create_default_context(cafile=ca) if ca else None

    def call(self, method: str, path: str, body: Any = None, **query: Any) -> Any:
        params = {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in query.items()}
        target = self.url + path + (f"?{urllib.parse.urlencode(params)}" if params else "")
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(target, data, self.headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout, context=self.context) as r:
                return json.loads(r.read() or b"null")
        except urllib.error.HTTPError as exc:
            raise _refusal(exc) from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise CliError(f"cannot reach {self.url}: {reason}") from None


def _refusal(exc: urllib.error.HTTPError) -> RegistryRefusal:
    raw = exc.read()
    try:
        body = json.loads(raw)
        message, code = body.get("message") or raw.decode(), body.get("error_code")
    except (ValueError, AttributeError):
        message, code = raw.decode("utf-8", "replace").strip() or exc.reason, None
    suffix = f" (error code {code})" if code is not None else f" (HTTP {exc.code})"
    return RegistryRefusal(f"{message}{suffix}")


def _properties(path: str | None) -> dict[str, str]:
    if not path:
        return {}
    try:
        props = parse_properties(Path(path).read_text())
    except OSError as exc:
        raise CliError(f"cannot read --command-config {path}: {exc.strerror}") from None
    except ConfigError as exc:
        raise CliError(f"--command-config {path}: {exc}") from None
    return {k.removeprefix("schema.registry."): v for k, v in props.items()}


def _quote(subject: str) -> str:
    return urllib.parse.quote(subject, safe="")


# -- actions -------------------------------------------------------------------------------
def run_list(args: argparse.Namespace) -> int:
    client = RegistryClient(args)
    out = console()
    if args.subject is None:
        subjects = client.call("GET", "/subjects", deleted=args.deleted, subjectPrefix=args.prefix)
        if args.output == "json":
            print_json(subjects)
        else:
            print_table(out, ["SUBJECT"], [[s] for s in subjects])
        return 0
    path = f"/subjects/{_quote(args.subject)}/versions"
    rows = []
    for version in client.call("GET", path, deleted=args.deleted):
        found = client.call("GET", f"{path}/{version}", deleted=args.deleted)
        rows.append(found)
    if args.output == "json":
        print_json(rows)
    else:
        table = [[r["version"], r["id"], r.get("schemaType", "AVRO")] for r in rows]
        print_table(out, ["VERSION", "ID", "TYPE"], table)
    return 0


def run_get(args: argparse.Namespace) -> int:
    client = RegistryClient(args)
    if args.id is not None:
        found = client.call("GET", f"/schemas/ids/{args.id}")
        found["id"] = args.id
    elif args.subject:
        path = f"/subjects/{_quote(args.subject)}/versions/{_quote(args.version)}"
        found = client.call("GET", path, deleted=args.deleted)
    else:
        raise CliError("name a SUBJECT (with --version) or give --id")
    if args.output == "json":
        print_json(found)
        return 0
    if "subject" in found:
        print(
            f"subject {found['subject']} version {found['version']} id {found['id']} "
            f"({found.get('schemaType', 'AVRO')})"
        )
    else:
        print(f"id {found['id']} ({found.get('schemaType', 'AVRO')})")
    print(_pretty(found["schema"]))
    return 0


def run_register(args: argparse.Namespace) -> int:
    client = RegistryClient(args)
    path = f"/subjects/{_quote(args.subject)}/versions"
    answer = client.call("POST", path, _schema_body(args), normalize=args.normalize)
    if args.output == "json":
        print_json(answer)
    else:
        print(f"registered under {args.subject}: id {answer['id']}")
    return 0


def run_check(args: argparse.Namespace) -> int:
    client = RegistryClient(args)
    version = f"/{_quote(args.version)}" if args.version else ""
    path = f"/compatibility/subjects/{_quote(args.subject)}/versions{version}"
    answer = client.call("POST", path, _schema_body(args), verbose=True)
    compatible = bool(answer.get("is_compatible"))
    if args.output == "json":
        print_json(answer)
    else:
        print(f"{'compatible' if compatible else 'NOT compatible'} with {args.subject}")
        for message in answer.get("messages") or []:
            print(f"  {message}")
    return 0 if compatible else 1


def run_delete(args: argparse.Namespace) -> int:
    client = RegistryClient(args)
    path = f"/subjects/{_quote(args.subject)}"
    if args.version:
        path += f"/versions/{_quote(args.version)}"
    answer = client.call("DELETE", path, permanent=args.permanent)
    versions = answer if isinstance(answer, list) else [answer]
    kind = "permanently deleted" if args.permanent else "deleted"
    print(f"{kind} {args.subject} version(s) {', '.join(str(v) for v in versions)}")
    return 0


def run_config(args: argparse.Namespace) -> int:
    client = RegistryClient(args)
    scope = f"/{_quote(args.subject)}" if args.subject else ""
    answer: dict[str, Any] = {}
    if args.delete:
        answer["config"] = client.call("DELETE", f"/config{scope}")
    elif args.compatibility:
        answer["config"] = client.call(
            "PUT", f"/config{scope}", {"compatibility": args.compatibility}
        )
    else:
        answer["config"] = client.call("GET", f"/config{scope}", defaultToGlobal=True)
    if args.mode:
        answer["mode"] = client.call("PUT", f"/mode{scope}", {"mode": args.mode})
    elif not args.delete and not args.compatibility:
        answer["mode"] = client.call("GET", f"/mode{scope}", defaultToGlobal=True)
    if args.output == "json":
        print_json(answer)
        return 0
    config = answer.get("config") or {}
    level = config.get("compatibilityLevel") or config.get("compatibility")
    rows = [["compatibility", level]] if level else []
    if "mode" in answer:
        rows.append(["mode", answer["mode"].get("mode")])
    print_table(console(), ["SETTING", args.subject or "(global)"], rows)
    return 0


def _schema_body(args: argparse.Namespace) -> dict[str, Any]:
    if args.schema_file:
        try:
            text = Path(args.schema_file).read_text()
        except OSError as exc:
            raise CliError(f"cannot read {args.schema_file}: {exc.strerror}") from None
    elif args.schema is not None:
        text = args.schema
    else:
        raise CliError("give the schema with --schema-file FILE or --schema TEXT")
    body: dict[str, Any] = {"schema": text}
    if args.type != "AVRO":
        body["schemaType"] = args.type
    references = []
    for item in args.reference:
        name, sep, rest = item.partition("=")
        subject, colon, version = rest.rpartition(":")
        if not sep or not colon or not version.isdigit():
            raise CliError(f"--reference {item!r}: expected NAME=SUBJECT:VERSION")
        references.append({"name": name, "subject": subject, "version": int(version)})
    if references:
        body["references"] = references
    return body


def _pretty(text: str) -> str:
    try:
        return json.dumps(json.loads(text), indent=2)
    except ValueError:
        return text  # Protobuf


# -- arguments -------------------------------------------------------------------------------
def _subject_filter(a: argparse.ArgumentParser) -> None:
    a.add_argument("subject", nargs="?", metavar="SUBJECT", help="list its versions")
    a.add_argument("--prefix", default="", help="only subjects starting with this")
    a.add_argument("--deleted", action="store_true", help="include soft-deleted ones")


def _get_arguments(a: argparse.ArgumentParser) -> None:
    a.add_argument("subject", nargs="?", metavar="SUBJECT")
    a.add_argument("--version", default="latest", help="a version number or latest")
    a.add_argument("--id", type=int, metavar="ID", help="a schema by its global id instead")
    a.add_argument("--deleted", action="store_true", help="a soft-deleted version too")


def _schema_arguments(a: argparse.ArgumentParser, *, check: bool = False) -> None:
    a.add_argument("subject", metavar="SUBJECT")
    source = a.add_mutually_exclusive_group()
    source.add_argument("--schema-file", metavar="FILE", help=".avsc, .proto or .json file")
    source.add_argument("--schema", metavar="TEXT", help="the schema itself")
    a.add_argument("--type", choices=TYPES, default="AVRO", type=str.upper)
    a.add_argument(
        "--reference",
        action="append",
        default=[],
        metavar="NAME=SUBJECT:VERSION",
        help="a schema this one imports (repeatable)",
    )
    if check:
        a.add_argument(
            "--version", help="check against this version only (default: as the level says)"
        )
    else:
        a.add_argument("--normalize", action="store_true", help="register the normalized form")


def _delete_arguments(a: argparse.ArgumentParser) -> None:
    a.add_argument("subject", metavar="SUBJECT")
    a.add_argument("--version", help="one version (a number or latest); default: the subject")
    a.add_argument("--permanent", action="store_true", help="hard delete (after a soft delete)")


def _config_arguments(a: argparse.ArgumentParser) -> None:
    a.add_argument("subject", nargs="?", metavar="SUBJECT", help="default: the global settings")
    a.add_argument("--compatibility", choices=LEVELS, type=str.upper, help="set the level")
    a.add_argument("--mode", choices=MODES, type=str.upper, help="set the mode")
    a.add_argument("--delete", action="store_true", help="drop the subject's own level")


ACTIONS: Sequence[Action] = (
    Action(
        "list",
        "subjects, or one subject's versions",
        "samsa schemas list orders-value",
        run_list,
        _subject_filter,
        output=True,
    ),
    Action(
        "get",
        "a schema: a subject's version or a global id",
        "samsa schemas get orders-value --version 2",
        run_get,
        _get_arguments,
        output=True,
    ),
    Action(
        "register",
        "register a schema under a subject (its id is printed)",
        "samsa schemas register orders-value --schema-file order.avsc",
        run_register,
        _schema_arguments,
        output=True,
    ),
    Action(
        "check",
        "whether a schema is compatible with a subject (exit 1 if not)",
        "samsa schemas check orders-value --schema-file order-v2.avsc",
        run_check,
        lambda a: _schema_arguments(a, check=True),
        output=True,
    ),
    Action(
        "delete",
        "delete a subject or one version (soft, or --permanent after that)",
        "samsa schemas delete orders-value --version 1",
        run_delete,
        _delete_arguments,
    ),
    Action(
        "config",
        "show or set the compatibility level and mode (global or a subject's)",
        "samsa schemas config orders-value --compatibility FULL",
        run_config,
        _config_arguments,
        output=True,
    ),
)
