class _Done:
    def __init__(self, fn, args, kwargs):
        try:
            self._value, self._error = fn(*args, **(kwargs or {})), None
        except Exception as e:  # noqa
            self._value, self._error = None, e

    def get(self, block=True, timeout=None):
        if self._error:
            raise self._error
        return self._value

    def ready(self):
        return True

    def start(self):
        pass


class Pool:
    def __init__(self, size=None):
        pass

    def apply_async(self, fn, args=None, kwds=None, callback=None):
        done = _Done(fn, args or (), kwds)
        if callback is not None and done._error is None:
            callback(done._value)
        return done

    def join(self):
        pass
