# Stand-in for attrdict (not on this machine's mirror): attribute access over nested dicts.
class AttrDict(dict):
    def __getattr__(self, key):
        value = self[key]
        if isinstance(value, dict):
            return AttrDict(value)
        if isinstance(value, list):
            return [AttrDict(v) if isinstance(v, dict) else v for v in value]
        return value
