"""Acme's DQN losses (acme/agents/jax/dqn/losses.py) with rlax's q_learning / double_q_learning / huber_loss,
transcribed small: the Q network is a dict-params MLP stub, the replay sample a dict, the key passed in."""

import jax
import jax.numpy as jnp


def huber_loss(x, delta=1.0):
  abs_x = jnp.abs(x)
  quadratic = jnp.minimum(abs_x, delta)
  linear = abs_x - quadratic
  return 0.5 * quadratic**2 + delta * linear


def q_learning(q_tm1, a_tm1, r_t, discount_t, q_t, stop_target_gradients=True):
  target_tm1 = r_t + discount_t * jnp.max(q_t)
  target_tm1 = jax.lax.select(stop_target_gradients,
                              jax.lax.stop_gradient(target_tm1), target_tm1)
  return target_tm1 - q_tm1[a_tm1]


def double_q_learning(q_tm1, a_tm1, r_t, discount_t, q_t_value, q_t_selector,
                      stop_target_gradients=True):
  target_tm1 = r_t + discount_t * q_t_value[q_t_selector.argmax()]
  target_tm1 = jax.lax.select(stop_target_gradients,
                              jax.lax.stop_gradient(target_tm1), target_tm1)
  return target_tm1 - q_tm1[a_tm1]


def network_apply(params, observation, is_training=True, key=None):
  del is_training, key
  h = jax.nn.relu(observation @ params["linear_0"]["w"] + params["linear_0"]["b"])
  return h @ params["linear_1"]["w"] + params["linear_1"]["b"]


def q_learning_loss(params, target_params, batch, key, discount=0.99, max_abs_reward=1.0, huber_loss_parameter=1.0):
  transitions = batch
  keys = jax.random.split(key, 2)
  q_tm1 = network_apply(params, transitions["observation"], is_training=True, key=keys[0])
  q_t = network_apply(target_params, transitions["next_observation"], is_training=True, key=keys[1])

  # Cast and clip rewards.
  d_t = (transitions["discount"] * discount).astype(jnp.float32)
  r_t = jnp.clip(transitions["reward"], -max_abs_reward, max_abs_reward).astype(jnp.float32)

  # Compute Q-learning TD-error.
  batch_error = jax.vmap(q_learning)
  td_error = batch_error(q_tm1, transitions["action"], r_t, d_t, q_t)
  batch_loss = huber_loss(td_error, huber_loss_parameter)
  loss = jnp.mean(batch_loss)
  return loss


def prioritized_double_q_loss(params, target_params, batch, probs, key, discount=0.99, importance_sampling_exponent=0.6,
                              max_abs_reward=1.0, huber_loss_parameter=1.0):
  transitions = batch
  keys = jax.random.split(key, 3)
  q_tm1 = network_apply(params, transitions["observation"], is_training=True, key=keys[0])
  q_t_value = network_apply(target_params, transitions["next_observation"], is_training=True, key=keys[1])
  q_t_selector = network_apply(params, transitions["next_observation"], is_training=True, key=keys[2])

  # Cast and clip rewards.
  d_t = (transitions["discount"] * discount).astype(jnp.float32)
  r_t = jnp.clip(transitions["reward"], -max_abs_reward, max_abs_reward).astype(jnp.float32)

  # Compute double Q-learning n-step TD-error.
  batch_error = jax.vmap(double_q_learning)
  td_error = batch_error(q_tm1, transitions["action"], r_t, d_t, q_t_value, q_t_selector)
  batch_loss = huber_loss(td_error, huber_loss_parameter)

  # Importance weighting.
  importance_weights = (1. / probs).astype(jnp.float32)
  importance_weights **= importance_sampling_exponent
  importance_weights /= jnp.max(importance_weights)

  # Reweight.
  loss = jnp.mean(importance_weights * batch_loss)  # []
  return loss


def _mlp(seed, sizes):
  rng = jax.random.PRNGKey(seed)
  params = {}
  for i, (n, m) in enumerate(zip(sizes[:-1], sizes[1:])):
    rng, k1, k2 = jax.random.split(rng, 3)
    params[f"linear_{i}"] = {"w": jax.random.normal(k1, (n, m)) * 0.7, "b": jax.random.normal(k2, (m,)) * 0.1}
  return params


def _batch():
  obs = jax.random.normal(jax.random.PRNGKey(11), (4, 3))
  return {"observation": obs,
          "action": jnp.array([0, 1, 1, 0]),
          "reward": jnp.array([0.3, -2.0, 1.0, 0.7]),
          "discount": jnp.array([1.0, 1.0, 0.0, 1.0]),
          "next_observation": jnp.roll(obs, 1, axis=0) * 0.9}


def example():
  return (_mlp(1, (3, 5, 2)), _mlp(2, (3, 5, 2)), _batch(), jax.random.PRNGKey(0))


def prioritized_example():
  return (_mlp(1, (3, 5, 2)), _mlp(2, (3, 5, 2)), _batch(), jnp.array([0.1, 0.4, 0.2, 0.3]), jax.random.PRNGKey(0))
