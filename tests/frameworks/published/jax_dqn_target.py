"""A target-network double DQN on plain dict params (no optax, no haiku): Q(s, a) read with take_along_axis, the
online argmax selecting the target's value, a Huber loss written with jnp.where, terminal masks as booleans."""

import jax
import jax.numpy as jnp


def q_network(params, obs):
  h = jax.nn.relu(obs @ params["w1"] + params["b1"])
  return h @ params["w2"] + params["b2"]


def huber(x, delta=1.0):
  return jnp.where(jnp.abs(x) <= delta, 0.5 * x ** 2, delta * (jnp.abs(x) - 0.5 * delta))


def dqn_loss(params, target_params, obs, actions, rewards, next_obs, dones, gamma=0.99):
  q = q_network(params, obs)
  q_sa = jnp.take_along_axis(q, actions[:, None], axis=1).squeeze(1)
  next_actions = jnp.argmax(q_network(params, next_obs), axis=1)
  next_q = q_network(target_params, next_obs)[jnp.arange(next_obs.shape[0]), next_actions]
  target = rewards + gamma * (1.0 - dones.astype(jnp.float64)) * next_q
  target = jax.lax.stop_gradient(target)
  return jnp.mean(huber(q_sa - target))


def _params(seed):
  k = jax.random.split(jax.random.PRNGKey(seed), 4)
  return {"w1": jax.random.normal(k[0], (3, 5)), "b1": jax.random.normal(k[1], (5,)) * 0.1,
          "w2": jax.random.normal(k[2], (5, 2)), "b2": jax.random.normal(k[3], (2,)) * 0.1}


def example():
  k1, k2, k3 = jax.random.split(jax.random.PRNGKey(40), 3)
  return (_params(1), _params(2), jax.random.normal(k1, (4, 3)), jnp.array([1, 0, 0, 1]),
          jax.random.normal(k2, (4,)), jax.random.normal(k3, (4, 3)), jnp.array([False, False, True, False]))
