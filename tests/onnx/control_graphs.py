"""Control-flow graphs shared by the ONNX export and import tests."""
import mxlite as mx

S = mx.sym


def loops_in_branches(v):
    """cond(flag, a foreach over x from h, a while_loop doubling h plus one until its sum
    reaches 5): the outputs of the branch taken, as a list."""
    x, h = v["x"], v["h"]

    def scan():
        outs, states = S.contrib.foreach(lambda d, s: ([d * s[0]], [d + s[0]]), x, [h])
        return [S.sum(outs[0], axis=0) + states[0]]

    def loop():
        _, final = S.contrib.while_loop(lambda a: S.sum(a) < 5.0,
                                        lambda a: (None, [a * 2 + 1]), [h], max_iterations=9)
        return [final]
    return S.contrib.cond(v["flag"], scan, loop)
