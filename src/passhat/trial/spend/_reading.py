"""Reading: the model proxy's copy of one reply, decoded (_wire.py) and parsed (_events.py) as it is forwarded.

The proxy forwards every chunk to the client unchanged and feeds the same chunk here; `finish()` charges the
reply's usage to the trial's Meter and says how the reply ended, as the witness records it (trial/_proxy.py):

  "200"                       a success (a stream: its message_stop was read)
  "overloaded: TYPE: MESSAGE" the stream ended with an error event of an overloaded upstream (overloaded_error;
                              Bedrock's serviceUnavailableException)
  "upstream error: ..."       ... of an upstream failure (api_error, timeout_error; Bedrock's internal / stream /
                              timeout exceptions); "rate limited: ..." (rate_limit_error, throttlingException);
                              "stream error: ..." any other error type
  "cut: ..."                  a stream that ended with neither message_stop nor an error event
  "unreadable: WHY"           a coding passhat does not decode, a body that does not decode, or events that do
                              not parse: the reply cannot be metered, and the proxy fails closed

Only a 2xx reply is read (an error status is its own outcome), and a JSON reply only when it is billed.
"""

from __future__ import annotations

from passhat.trial.spend._caps import Meter
from passhat.trial.spend._events import Body, Frames, Messages, Sse, error_outcome
from passhat.trial.spend._wire import Decoder, UnreadableError

STREAMS: dict[str, type[Sse | Frames]] = {"text/event-stream": Sse, "application/vnd.amazon.eventstream": Frames}


class Reading:
    """One reply of status `status`, with its `content-type` and `content-encoding` headers; `meter`: the trial's
    (Spend.meter), None when no Spend is set. `problem` is set (and reading stops) once the reply is unreadable."""

    def __init__(
        self, status: int, content_type: str | None, content_encoding: str | None, meter: Meter | None
    ) -> None:
        self.status, self.meter = status, meter
        self.problem: str | None = None
        self.messages = Messages()
        kind = (content_type or "").split(";", 1)[0].strip().lower()
        self.stream = kind in STREAMS
        read = 200 <= status < 300 and (self.stream or (meter is not None and meter.billed))
        self._parser: Sse | Frames | Body | None = STREAMS.get(kind, Body)(self.messages) if read else None
        self._decoder: Decoder | None = None
        if self._parser is not None:
            try:
                self._decoder = Decoder(content_encoding)
            except UnreadableError as error:
                self._fail(str(error))

    def _fail(self, problem: str) -> None:
        """Unreadable: reading stops, and the trial's spend is marked unmetered (it admits no further request)."""
        self.problem = problem
        if self.meter is not None and self.meter.spend is not None:
            self.meter.spend.unreadable(problem)

    def feed(self, chunk: bytes) -> None:
        """Read the next chunk of the body, as forwarded."""
        if self._decoder is not None and self._parser is not None and self.problem is None:
            try:
                self._parser.feed(self._decoder.feed(chunk))
            except UnreadableError as error:
                self._fail(str(error))
            except Exception as error:  # no reader's failure may break the client's reply: it is unreadable
                self._fail(f"{type(error).__name__}: {error}")

    def finish(self, broke: str | None = None) -> str:
        """The reply ended (`broke`: why the upstream's connection broke off, if it did): charge its usage and
        say how it ended."""
        if self._decoder is not None and self._parser is not None and self.problem is None:
            try:
                self._parser.feed(self._decoder.end(), final=broke is None)
            except UnreadableError as error:
                self._fail(str(error))
            except Exception as error:
                self._fail(f"{type(error).__name__}: {error}")
        self.messages.close()
        if self.meter is not None:
            for usage in self.messages.ended:
                self.meter.add(usage)
            self.meter.close()
        if self.problem is not None:
            return f"unreadable: {self.problem}"
        if self.messages.error is not None:
            return error_outcome(*self.messages.error)
        complete = self.stream and self.messages.stopped
        if broke is not None and not complete:
            return f"cut: {broke}"
        if self.stream and self._parser is not None and not complete:
            return "cut: the event stream ended before message_stop"
        return str(self.status)
