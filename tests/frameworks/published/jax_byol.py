"""BYOL's loss (deepmind-research byol/byol_experiment.py, utils/helpers.py) and SimSiam's in JAX, transcribed
small: online network + predictor against a stopped target network, both views, l2_normalize with an epsilon."""

import jax
import jax.numpy as jnp


def l2_normalize(x, axis=None, epsilon=1e-12):
  square_sum = jnp.sum(jnp.square(x), axis=axis, keepdims=True)
  x_inv_norm = jax.lax.rsqrt(jnp.maximum(square_sum, epsilon))
  return x * x_inv_norm


def regression_loss(x, y):
  normed_x, normed_y = l2_normalize(x, axis=-1), l2_normalize(y, axis=-1)
  return jnp.sum((normed_x - normed_y)**2, axis=-1)


def mlp(params, x):
  h = x @ params["w1"] + params["b1"]
  mean = jnp.mean(h, axis=0, keepdims=True)
  var = jnp.var(h, axis=0, keepdims=True)
  h = (h - mean) * jax.lax.rsqrt(var + 1e-5)
  return jax.nn.relu(h) @ params["w2"]


def forward(params, x):
  embedding = jnp.tanh(x @ params["encoder"]["w"])
  projection = mlp(params["projector"], embedding)
  prediction = mlp(params["predictor"], projection)
  return {"projection": projection, "prediction": prediction}


def byol_loss(online_params, target_params, view1, view2):
  online_network_out_1 = forward(online_params, view1)
  online_network_out_2 = forward(online_params, view2)
  target_network_out_1 = forward(target_params, view1)
  target_network_out_2 = forward(target_params, view2)

  # Representation loss
  repr_loss = regression_loss(
      online_network_out_1["prediction"],
      jax.lax.stop_gradient(target_network_out_2["projection"]))
  repr_loss = repr_loss + regression_loss(
      online_network_out_2["prediction"],
      jax.lax.stop_gradient(target_network_out_1["projection"]))
  return jnp.mean(repr_loss)


def simsiam_loss(params, view1, view2):
  def D(p, z):
    z = jax.lax.stop_gradient(z)
    p = p / jnp.linalg.norm(p, axis=1, keepdims=True)
    z = z / jnp.linalg.norm(z, axis=1, keepdims=True)
    return -(p * z).sum(axis=1).mean()

  out1, out2 = forward(params, view1), forward(params, view2)
  return D(out1["prediction"], out2["projection"]) / 2 + D(out2["prediction"], out1["projection"]) / 2


def _mlp(seed, n, h, m):
  k = jax.random.split(jax.random.PRNGKey(seed), 3)
  return {"w1": jax.random.normal(k[0], (n, h)), "b1": jax.random.normal(k[1], (h,)) * 0.1,
          "w2": jax.random.normal(k[2], (h, m))}


def _network(seed):
  return {"encoder": {"w": jax.random.normal(jax.random.PRNGKey(seed), (3, 4))},
          "projector": _mlp(seed + 1, 4, 5, 3), "predictor": _mlp(seed + 2, 3, 5, 3)}


def _views():
  k1, k2 = jax.random.split(jax.random.PRNGKey(30))
  return jax.random.normal(k1, (4, 3)), jax.random.normal(k2, (4, 3))


def byol_example():
  return (_network(1), _network(10), *_views())


def simsiam_example():
  return (_network(1), *_views())
