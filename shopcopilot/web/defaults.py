"""The web server's default limits, in one place the CLI can import without the web stack."""

DEFAULT_RATE_LIMIT = "300/minute"  # API requests per client address
DEFAULT_MAX_BODY_BYTES = 64 * 1024
DEFAULT_MESSAGE_CHARS = 2000  # the server's limit unless configured (--max-message-chars)
MAX_MESSAGE_CHARS = 20000  # the most any server accepts
