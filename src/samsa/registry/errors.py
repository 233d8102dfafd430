"""The registry's errors, with Confluent Schema Registry's HTTP statuses and error codes.

Clients (confluent-kafka's ``SchemaRegistryClient``, python-schema-registry-client)
read ``error_code`` from the body and some of them match on the message, so both
follow Confluent's ``Errors`` class and its ``Rest*Exception`` messages.
"""

from __future__ import annotations


class RegistryError(Exception):
    """An error answered as ``{"error_code": code, "message": message}`` with ``status``."""

    def __init__(self, status: int, error_code: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.error_code = error_code
        self.message = message

    def body(self) -> dict[str, object]:
        return {"error_code": self.error_code, "message": self.message}


def subject_not_found(subject: str) -> RegistryError:
    return RegistryError(404, 40401, f"Subject '{subject}' not found.")


def version_not_found(version: int | str) -> RegistryError:
    return RegistryError(404, 40402, f"Version {version} not found.")


def schema_not_found(schema_id: int | None = None) -> RegistryError:
    if schema_id is None:
        return RegistryError(404, 40403, "Schema not found")
    return RegistryError(404, 40403, f"Schema {schema_id} not found")


def subject_soft_deleted(subject: str) -> RegistryError:
    return RegistryError(
        404,
        40404,
        f"Subject '{subject}' was soft deleted.Set permanent=true to delete permanently",
    )


def subject_not_soft_deleted(subject: str) -> RegistryError:
    return RegistryError(
        404,
        40405,
        f"Subject '{subject}' was not deleted first before being permanently deleted",
    )


def version_soft_deleted(subject: str, version: int) -> RegistryError:
    return RegistryError(
        404,
        40406,
        f"Subject '{subject}' Version {version} was soft deleted."
        "Set permanent=true to delete permanently",
    )


def version_not_soft_deleted(subject: str, version: int) -> RegistryError:
    return RegistryError(
        404,
        40407,
        f"Subject '{subject}' Version {version} was not deleted first before being "
        "permanently deleted",
    )


def subject_compatibility_not_configured(subject: str) -> RegistryError:
    return RegistryError(
        404, 40408, f"Subject '{subject}' does not have subject-level compatibility configured"
    )


def subject_mode_not_configured(subject: str) -> RegistryError:
    return RegistryError(
        404, 40409, f"Subject '{subject}' does not have subject-level mode configured"
    )


def incompatible_schema(message: str) -> RegistryError:
    # Confluent 5.x-7.x and Karapace answer error_code 409 (newer Confluent: 40901);
    # clients only look at the HTTP status, which is 409 either way.
    return RegistryError(409, 409, message)


def invalid_schema(detail: str) -> RegistryError:
    return RegistryError(422, 42201, detail)


def invalid_version(version: str) -> RegistryError:
    return RegistryError(
        422,
        42202,
        f"The specified version '{version}' is not a valid version id. "
        'Allowed values are between [1, 2^31-1] and the string "latest"',
    )


def invalid_compatibility_level() -> RegistryError:
    return RegistryError(
        422,
        42203,
        "Invalid compatibility level. Valid values are none, backward, forward, full, "
        "backward_transitive, forward_transitive, and full_transitive",
    )


def invalid_mode(mode: str) -> RegistryError:
    return RegistryError(
        422,
        42204,
        f"Invalid mode {mode}. Valid values are READWRITE, READONLY, READONLY_OVERRIDE, and IMPORT",
    )


def operation_not_permitted(message: str) -> RegistryError:
    return RegistryError(422, 42205, message)


def reference_exists(key_text: str) -> RegistryError:
    return RegistryError(422, 42206, f"One or more references exist to the schema {key_text}.")


def id_does_not_match(message: str) -> RegistryError:
    return RegistryError(422, 42207, message)


def invalid_subject(subject: str) -> RegistryError:
    return RegistryError(422, 42208, f"The specified subject '{subject}' is not valid.")


def bad_request(message: str) -> RegistryError:
    """Unparseable JSON or a wrong field type (Confluent answers Jackson's errors with 400)."""
    return RegistryError(400, 400, message)


def not_found_path() -> RegistryError:
    return RegistryError(404, 404, "HTTP 404 Not Found")


def method_not_allowed() -> RegistryError:
    return RegistryError(405, 405, "HTTP 405 Method Not Allowed")


def unsupported_media_type() -> RegistryError:
    return RegistryError(415, 415, "HTTP 415 Unsupported Media Type")


def store_error(message: str) -> RegistryError:
    return RegistryError(500, 50001, message)


def store_timeout(detail: str = "") -> RegistryError:
    message = "Write to the Kafka store timed out"
    return RegistryError(500, 50002, f"{message}: {detail}" if detail else message)


def forwarding_error(message: str) -> RegistryError:
    return RegistryError(500, 50003, f"Error while forwarding the request to the leader: {message}")


def unknown_leader(message: str) -> RegistryError:
    return RegistryError(500, 50004, f"Unknown leader: {message}")


def unauthenticated(message: str) -> RegistryError:
    return RegistryError(401, 401, message)


def forbidden(message: str) -> RegistryError:
    """Confluent's authorization refusal (its RBAC plugin's 40301)."""
    return RegistryError(403, 40301, message)
