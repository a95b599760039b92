from json import *  # noqa: stand-in for python-rapidjson, not on this machine's mirror
