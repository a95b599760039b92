# Stand-in for gevent (not on this machine's mirror): async calls run at once.
import time
from . import pool


class Timeout(Exception):
    pass


def sleep(seconds):
    time.sleep(seconds)
