"""rlax's TD(lambda) (multistep.lambda_returns, value_learning.td_lambda) as written, applied over a batch with
jax.vmap on time-major trajectories; the value network is a dict-params stub."""

import jax
import jax.numpy as jnp


def lambda_returns(r_t, discount_t, v_t, lambda_=1., stop_target_gradients=False):
  lambda_ = jnp.ones_like(discount_t) * lambda_  # If scalar, make into vector.

  # Work backwards to compute `G_{T-1}`, ..., `G_0`.
  def _body(acc, xs):
    returns, discounts, values, lambda_ = xs
    acc = returns + discounts * ((1-lambda_) * values + lambda_ * acc)
    return acc, acc

  _, returns = jax.lax.scan(
      _body, v_t[-1], (r_t, discount_t, v_t, lambda_), reverse=True)

  return jax.lax.select(stop_target_gradients,
                        jax.lax.stop_gradient(returns),
                        returns)


def td_lambda(v_tm1, r_t, discount_t, v_t, lambda_, stop_target_gradients=True):
  target_tm1 = lambda_returns(
      r_t, discount_t, v_t, lambda_, stop_target_gradients)
  return target_tm1 - v_tm1


def value_net(params, obs):
  h = jnp.tanh(jnp.einsum("tbd,dh->tbh", obs, params["torso"]["w"]) + params["torso"]["b"])
  return jnp.squeeze(h @ params["head"]["w"], axis=-1)


def loss(params, obs, rewards, discounts):
  """obs: [T+1, B, D]; rewards, discounts: [T, B]."""
  values = value_net(params, obs)
  td_errors = jax.vmap(td_lambda, in_axes=(1, 1, 1, 1, None), out_axes=1)(
      values[:-1], rewards, discounts, values[1:], 0.8)
  return 0.5 * jnp.mean(jnp.square(td_errors))


def example():
  k = jax.random.split(jax.random.PRNGKey(3), 5)
  params = {"torso": {"w": jax.random.normal(k[0], (3, 4)) * 0.6, "b": jax.random.normal(k[1], (4,)) * 0.1},
            "head": {"w": jax.random.normal(k[2], (4, 1)) * 0.6}}
  obs = jax.random.normal(k[3], (5, 2, 3))
  rewards = jax.random.normal(k[4], (4, 2))
  discounts = jnp.array([[0.9, 0.9], [0.9, 0.0], [0.9, 0.9], [0.0, 0.9]])
  return params, obs, rewards, discounts
