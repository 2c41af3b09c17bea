"""Linear regression, softmax regression and an MLP written the *Dive into Deep Learning* way:
``from mxlite import np, npx, autograd, gluon`` and NumPy code, trained on synthetic data.

Run: ``python examples/d2l_numpy.py`` (a few seconds on a laptop CPU). Each part prints
``label = value`` lines; tests/test_examples.py checks them against NumPy's least squares
and the data's own labels.
"""
import numpy as onp

from mxlite import autograd, gluon, np, npx

npx.set_np()


# ---- 1. linear regression from scratch --------------------------------------------------------
def synthetic_data(w, b, num_examples):
    """y = Xw + b + noise."""
    X = np.random.normal(0, 1, (num_examples, len(w)))
    y = np.dot(X, w) + b
    y += np.random.normal(0, 0.01, y.shape)
    return X, y.reshape((-1, 1))


def data_iter(batch_size, features, labels):
    num_examples = len(features)
    indices = onp.random.default_rng(0).permutation(num_examples)
    for i in range(0, num_examples, batch_size):
        batch = np.array(indices[i: i + batch_size])
        yield features[batch], labels[batch]


def linreg(X, w, b):
    return np.dot(X, w) + b


def squared_loss(y_hat, y):
    return (y_hat - y.reshape(y_hat.shape)) ** 2 / 2


def sgd(params, lr, batch_size):
    for param in params:
        param[:] = param - lr * param.grad / batch_size


def linear_regression():
    true_w, true_b = np.array([2, -3.4]), 4.2
    features, labels = synthetic_data(true_w, true_b, 1000)
    w = np.random.normal(0, 0.01, (2, 1))
    b = np.zeros(1)
    w.attach_grad()
    b.attach_grad()
    lr, batch_size = 0.03, 10
    for _ in range(3):
        for X, y in data_iter(batch_size, features, labels):
            with autograd.record():
                loss = squared_loss(linreg(X, w, b), y)
            loss.backward()
            sgd([w, b], lr, batch_size)
    # the least-squares fit of the same data, for comparison
    design = onp.hstack([features.asnumpy(), onp.ones((len(features), 1), onp.float32)])
    fit = onp.linalg.lstsq(design, labels.asnumpy(), rcond=None)[0].ravel()
    print("linreg w =", [round(float(v), 3) for v in w.reshape(-1).asnumpy()])
    print("linreg b =", round(float(b.item()), 3))
    print("lstsq w =", [round(float(v), 3) for v in fit[:2]])
    print("lstsq b =", round(float(fit[2]), 3))
    print("linreg loss =", round(float(squared_loss(linreg(features, w, b), labels).mean()), 5))


# ---- 2. softmax regression and 3. an MLP with Gluon ------------------------------------------
def blobs(num_examples, seed):
    """Three Gaussian blobs in 4-d, labels 0..2."""
    rng = onp.random.default_rng(seed)
    centres = onp.array([[2, 0, 0, 1], [-2, 1, 0, -1], [0, -2, 2, 0]], onp.float32)
    labels = rng.integers(0, 3, num_examples)
    X = centres[labels] + rng.normal(0, 0.8, (num_examples, 4)).astype(onp.float32)
    return np.array(X), np.array(labels, dtype="int32")


def accuracy(y_hat, y):
    return float((y_hat.argmax(axis=1) == y.astype("int64")).mean())


def train(net, epochs, lr, hybridize):
    X, y = blobs(600, seed=1)
    X_test, y_test = blobs(300, seed=2)
    net.initialize()
    if hybridize:
        net.hybridize()
    loss = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": lr})
    dataset = gluon.data.ArrayDataset(X, y)
    loader = gluon.data.DataLoader(dataset, batch_size=32, shuffle=True)
    for _ in range(epochs):
        for Xb, yb in loader:
            with autograd.record():
                l = loss(net(Xb), yb)
            l.backward()
            trainer.step(Xb.shape[0])
    return accuracy(net(X), y), accuracy(net(X_test), y_test)


def softmax_regression():
    net = gluon.nn.Dense(3)
    train_acc, test_acc = train(net, epochs=5, lr=0.1, hybridize=False)
    print("softmax train accuracy =", round(train_acc, 3))
    print("softmax test accuracy =", round(test_acc, 3))


def mlp():
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(32, activation="relu"), gluon.nn.Dense(3))
    train_acc, test_acc = train(net, epochs=5, lr=0.1, hybridize=True)
    print("mlp train accuracy =", round(train_acc, 3))
    print("mlp test accuracy =", round(test_acc, 3))


if __name__ == "__main__":
    np.random.seed(0)
    linear_regression()
    softmax_regression()
    mlp()
